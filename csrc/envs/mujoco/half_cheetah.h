// half_cheetah.h — HalfCheetah-v5 (gymnasium/envs/mujoco/half_cheetah_v5.py)
// and HalfCheetah-v4 (half_cheetah_v4.py).
//
// A planar two-legged runner rewarded for its x velocity. Observation: qpos
// (without x by default) and qvel. Never terminates; the time limit truncates.
// v4 steps alike; its info calls the forward reward "reward_run", and its
// reset has no info.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class HalfCheetahModel : public MujocoModel {
 public:
  explicit HalfCheetahModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        forward_reward_weight(config.real("forward_reward_weight")),
        ctrl_cost_weight(config.real("ctrl_cost_weight")),
        reset_noise_scale(config.real("reset_noise_scale")),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        observation_size(nq() + nv() - exclude_current_positions),
        info_extras({info("x_position"), info("x_velocity"), info(v4 ? "reward_run" : "reward_forward"),
                     info("reward_ctrl")}) {}

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double forward_reward_weight, ctrl_cost_weight, reset_noise_scale;
  const bool exclude_current_positions;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class HalfCheetah : public MujocoEnv {
 public:
  using Model = HalfCheetahModel;

  explicit HalfCheetah(const Model& model) : MujocoEnv(model), model_(model) {}

  // HalfCheetahEnv.reset_model: uniform noise on qpos, Gaussian noise on qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Normal, out);
    // v5's _get_reset_info; v4 has none. The step-only values are 0.
    write_info(out, {model_.v4 ? 0.0 : sim_.data().qpos[0], 0, 0, 0});
  }

  // HalfCheetahEnv.step.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    double velocity[1];
    if (!step_forward(action, out, velocity)) return unstable_step();
    const double x_after = sim_.data().qpos[0], x_velocity = velocity[0];

    const double forward_reward = model_.forward_reward_weight * x_velocity;
    const double ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(action.values, action.size);
    StepResult result;
    result.reward = forward_reward - ctrl_cost;
    write_info(out, {x_after, x_velocity, forward_reward, -ctrl_cost});  // v4's reward_run is forward_reward
    return result;
  }

 private:
  // HalfCheetahEnv._get_obs.
  void write_observation() override { write_qpos_qvel(model_.exclude_current_positions ? 1 : 0); }

  const Model& model_;
};

}  // namespace torchpool::mujoco
