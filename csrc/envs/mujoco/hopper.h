// hopper.h — Hopper-v5 (gymnasium/envs/mujoco/hopper_v5.py).
//
// A planar one-legged hopper rewarded for its x velocity and for staying
// healthy. Observation: qpos (without x by default) and qvel clipped to
// [-10, 10]. Terminates when unhealthy: state[2:] outside healthy_state_range,
// z outside healthy_z_range or the torso angle outside healthy_angle_range
// (all bounds exclusive).
#pragma once

#include <vector>

#include "planar_walker.h"

namespace torchpool::mujoco {

class HopperModel : public MujocoModel {
 public:
  explicit HopperModel(const Config& config)
      : MujocoModel(config),
        forward_reward_weight(config.number("forward_reward_weight")),
        ctrl_cost_weight(config.number("ctrl_cost_weight")),
        healthy_reward(config.number("healthy_reward")),
        terminate_when_unhealthy(flag_kwarg(config, "terminate_when_unhealthy")),
        healthy_state_range(range_kwarg(config, "healthy_state_range")),
        healthy_z_range(range_kwarg(config, "healthy_z_range")),
        healthy_angle_range(range_kwarg(config, "healthy_angle_range")),
        reset_noise_scale(config.number("reset_noise_scale")),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        observation_size(nq() + nv() - exclude_current_positions),
        info_extras({info("x_position"), info("z_distance_from_origin"), info("x_velocity"), info("reward_forward"),
                     info("reward_ctrl"), info("reward_survive")}) {}

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const double forward_reward_weight, ctrl_cost_weight, healthy_reward;
  const bool terminate_when_unhealthy;
  const Range healthy_state_range, healthy_z_range, healthy_angle_range;
  const double reset_noise_scale;
  const bool exclude_current_positions;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class Hopper : public PlanarWalker<Hopper, HopperModel> {
 public:
  using PlanarWalker::PlanarWalker;

  // HopperEnv.is_healthy: every value of state_vector()[2:] (qpos[2:], qvel)
  // strictly inside healthy_state_range, z = qpos[1] and angle = qpos[2]
  // strictly inside theirs.
  bool is_healthy() const {
    const mjData& data = sim_.data();
    const Range state = model_.healthy_state_range;
    for (int i = 2; i < model_.nq(); ++i)
      if (!strictly_inside(data.qpos[i], state)) return false;
    for (int i = 0; i < model_.nv(); ++i)
      if (!strictly_inside(data.qvel[i], state)) return false;
    return strictly_inside(data.qpos[1], model_.healthy_z_range) &&
           strictly_inside(data.qpos[2], model_.healthy_angle_range);
  }
};

}  // namespace torchpool::mujoco
