// swimmer.h — Swimmer-v5 (gymnasium/envs/mujoco/swimmer_v5.py) and Swimmer-v4 (swimmer_v4.py).
//
// A three-link swimmer in a viscous fluid rewarded for its x velocity.
// Observation: qpos (without x, y by default) and qvel. Never terminates.
// v4 steps alike; its info names the reward terms reward_fwd and
// forward_reward (the same value), and its reset has no info.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class SwimmerModel : public MujocoModel {
 public:
  explicit SwimmerModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        forward_reward_weight(config.real("forward_reward_weight")),
        ctrl_cost_weight(config.real("ctrl_cost_weight")),
        reset_noise_scale(config.real("reset_noise_scale")),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        observation_size(nq() + nv() - 2 * exclude_current_positions),
        info_extras({info("x_position"), info("y_position"), info("distance_from_origin"), info("x_velocity"),
                     info("y_velocity"), info(v4 ? "reward_fwd" : "reward_forward"), info("reward_ctrl")}) {
    if (v4) info_extras.push_back(info("forward_reward"));
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double forward_reward_weight, ctrl_cost_weight, reset_noise_scale;
  const bool exclude_current_positions;
  const size_t observation_size;
  std::vector<FieldSpec> info_extras;
};

class Swimmer : public MujocoEnv {
 public:
  using Model = SwimmerModel;

  explicit Swimmer(const Model& model) : MujocoEnv(model), model_(model) {}

  // SwimmerEnv.reset_model: uniform noise on qpos and qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Uniform, out);
    const double* qpos = sim_.data().qpos;
    if (model_.v4)
      write_zero_info(out);  // no _get_reset_info in v4
    else
      write_info(out, {qpos[0], qpos[1], norm2(qpos), 0, 0, 0, 0});  // _get_reset_info
  }

  // SwimmerEnv.step: the velocity of qpos[0:2] (the free x, y slides).
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    double velocity[2];
    if (!step_forward(action, out, velocity)) return unstable_step();
    const double x_velocity = velocity[0], y_velocity = velocity[1];
    const double* qpos = sim_.data().qpos;

    const double forward_reward = model_.forward_reward_weight * x_velocity;
    const double ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(action.values, action.size);
    StepResult result;
    result.reward = forward_reward - ctrl_cost;
    if (model_.v4)  // forward_reward, last, is reward_fwd again
      write_info(out,
                 {qpos[0], qpos[1], norm2(qpos), x_velocity, y_velocity, forward_reward, -ctrl_cost, forward_reward});
    else
      write_info(out, {qpos[0], qpos[1], norm2(qpos), x_velocity, y_velocity, forward_reward, -ctrl_cost});
    return result;
  }

 private:
  // SwimmerEnv._get_obs.
  void write_observation() override { write_qpos_qvel(model_.exclude_current_positions ? 2 : 0); }

  const Model& model_;
};

}  // namespace torchpool::mujoco
