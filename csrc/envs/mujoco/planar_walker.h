// planar_walker.h — what Hopper and Walker2d share, v5 and v4.
//
// hopper_v5.py and walker2d_v5.py have the same reset (uniform noise on qpos
// and qvel), the same step (forward reward on x velocity, a healthy reward,
// a control cost, termination when unhealthy), the same info and the same
// observation (qpos without x by default, qvel clipped to [-10, 10]), and
// the same kwargs but Hopper's healthy_state_range. They differ only in
// is_healthy(), which each task supplies (CRTP: no virtual call on the step
// path). hopper_v4.py and walker2d_v4.py step alike but pay the healthy reward
// also on the step that terminates (healthy_reward_of), report only
// x_position and x_velocity, and have no reset info.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

// Range bounds are exclusive in both references' is_healthy.
inline bool strictly_inside(double value, Range range) { return range.low < value && value < range.high; }

// The kwargs both tasks read; HopperModel adds healthy_state_range.
class PlanarWalkerModel : public MujocoModel {
 public:
  explicit PlanarWalkerModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        forward_reward_weight(config.real("forward_reward_weight")),
        ctrl_cost_weight(config.real("ctrl_cost_weight")),
        healthy_reward(config.real("healthy_reward")),
        terminate_when_unhealthy(flag_kwarg(config, "terminate_when_unhealthy")),
        healthy_z_range(range_kwarg(config, "healthy_z_range")),
        healthy_angle_range(range_kwarg(config, "healthy_angle_range")),
        reset_noise_scale(config.real("reset_noise_scale")),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        observation_size(nq() + nv() - exclude_current_positions),
        info_extras(v4 ? std::vector<FieldSpec>{info("x_position"), info("x_velocity")}
                       : std::vector<FieldSpec>{info("x_position"), info("z_distance_from_origin"), info("x_velocity"),
                                                info("reward_forward"), info("reward_ctrl"), info("reward_survive")}) {}

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double forward_reward_weight, ctrl_cost_weight, healthy_reward;
  const bool terminate_when_unhealthy;
  const Range healthy_z_range, healthy_angle_range;
  const double reset_noise_scale;
  const bool exclude_current_positions;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

template <class Task, class TaskModel>
class PlanarWalker : public MujocoEnv {
 public:
  using Model = TaskModel;

  explicit PlanarWalker(const Model& model) : MujocoEnv(model), model_(model) {}

  // reset_model: uniform noise on qpos and qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Uniform, out);
    const double* qpos = sim_.data().qpos;
    if (model_.v4)
      write_zero_info(out);  // no _get_reset_info in v4
    else
      write_info(out, {qpos[0], qpos[1] - model_.init_qpos[1], 0, 0, 0, 0});  // _get_reset_info
  }

  // step: the same in hopper_v5.py and walker2d_v5.py but for is_healthy.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    double velocity[1];
    if (!step_forward(action, out, velocity)) return unstable_step();
    const double x_velocity = velocity[0];
    const double* qpos = sim_.data().qpos;

    const bool healthy = static_cast<const Task&>(*this).is_healthy();
    const double forward_reward = model_.forward_reward_weight * x_velocity;
    const double healthy_reward =
        healthy_reward_of(model_.v4, healthy, model_.terminate_when_unhealthy, model_.healthy_reward);
    const double rewards = forward_reward + healthy_reward;
    const double ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(action.values, action.size);
    StepResult result;
    result.reward = rewards - ctrl_cost;
    result.terminated = !healthy && model_.terminate_when_unhealthy;
    if (model_.v4)
      write_info(out, {qpos[0], x_velocity});
    else
      write_info(out, {qpos[0], qpos[1] - model_.init_qpos[1], x_velocity, forward_reward, -ctrl_cost, healthy_reward});
    return result;
  }

 protected:
  // _get_obs.
  void write_observation() override { write_qpos_qvel(model_.exclude_current_positions ? 1 : 0, true); }

  const Model& model_;
};

}  // namespace torchpool::mujoco
