// half_cheetah.h — HalfCheetah-v5 (gymnasium/envs/mujoco/half_cheetah_v5.py).
//
// A planar two-legged runner rewarded for its x velocity. Observation: qpos
// (without x by default) and qvel. Never terminates; the time limit truncates.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class HalfCheetahModel : public MujocoModel {
 public:
  explicit HalfCheetahModel(const Config& config)
      : MujocoModel(config),
        forward_reward_weight(config.number("forward_reward_weight")),
        ctrl_cost_weight(config.number("ctrl_cost_weight")),
        reset_noise_scale(config.number("reset_noise_scale")),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        observation_size(nq() + nv() - exclude_current_positions),
        info_extras({info("x_position"), info("x_velocity"), info("reward_forward"), info("reward_ctrl")}) {}

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const double forward_reward_weight, ctrl_cost_weight, reset_noise_scale;
  const bool exclude_current_positions;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class HalfCheetah : public MujocoEnv {
 public:
  using Model = HalfCheetahModel;

  explicit HalfCheetah(const Model& model)
      : MujocoEnv(model, model.observation_size, model.info_extras), model_(model),
        qpos_(model.nq()), qvel_(model.nv()) {}

  // HalfCheetahEnv.reset_model: uniform noise on qpos, Gaussian noise on qvel.
  void reset(Rng& rng, StepOutput& out) {
    const double scale = model_.reset_noise_scale;
    for (int i = 0; i < model_.nq(); ++i) qpos_[i] = model_.init_qpos[i] + uniform(rng, -scale, scale);
    for (int i = 0; i < model_.nv(); ++i) qvel_[i] = model_.init_qvel[i] + scale * standard_normal(rng);
    sim_.reset(qpos_.data(), qvel_.data());
    write_observation();
    publish(out);
    write_info(out, {sim_.data().qpos[0], 0, 0, 0});  // _get_reset_info; step-only values 0
  }

  // HalfCheetahEnv.step.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    const double x_before = sim_.data().qpos[0];
    sim_.do_simulation(action.values, model_.frame_skip);
    const double x_after = sim_.data().qpos[0];
    const double x_velocity = (x_after - x_before) / model_.dt;
    write_observation();
    if (!publish(out)) return unstable_step();

    const double forward_reward = model_.forward_reward_weight * x_velocity;
    const double ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(action.values, action.size);
    StepResult result;
    result.reward = forward_reward - ctrl_cost;
    write_info(out, {x_after, x_velocity, forward_reward, -ctrl_cost});
    return result;
  }

 private:
  // HalfCheetahEnv._get_obs.
  void write_observation() {
    const mjData& data = sim_.data();
    double* obs = next_observation();
    obs = std::copy(data.qpos + (model_.exclude_current_positions ? 1 : 0), data.qpos + model_.nq(), obs);
    std::copy(data.qvel, data.qvel + model_.nv(), obs);
  }

  const Model& model_;
  std::vector<double> qpos_, qvel_;  // reset scratch
};

}  // namespace torchpool::mujoco
