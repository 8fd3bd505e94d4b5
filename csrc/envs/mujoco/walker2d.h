// walker2d.h — Walker2d-v5 (gymnasium/envs/mujoco/walker2d_v5.py).
//
// A planar two-legged walker rewarded for its x velocity and for staying
// healthy. Observation: qpos (without x by default) and qvel clipped to
// [-10, 10]. Terminates when z or the torso angle leave their healthy ranges
// (bounds exclusive). The default XML is walker2d_v5.xml (both feet with the
// same friction, unlike v4's).
#pragma once

#include <vector>

#include "planar_walker.h"

namespace torchpool::mujoco {

class Walker2dModel : public MujocoModel {
 public:
  explicit Walker2dModel(const Config& config)
      : MujocoModel(config),
        forward_reward_weight(config.number("forward_reward_weight")),
        ctrl_cost_weight(config.number("ctrl_cost_weight")),
        healthy_reward(config.number("healthy_reward")),
        terminate_when_unhealthy(flag_kwarg(config, "terminate_when_unhealthy")),
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
  const Range healthy_z_range, healthy_angle_range;
  const double reset_noise_scale;
  const bool exclude_current_positions;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class Walker2d : public PlanarWalker<Walker2d, Walker2dModel> {
 public:
  using PlanarWalker::PlanarWalker;

  // Walker2dEnv.is_healthy: z = qpos[1], angle = qpos[2], strictly inside their ranges.
  bool is_healthy() const {
    const double* qpos = sim_.data().qpos;
    return strictly_inside(qpos[1], model_.healthy_z_range) && strictly_inside(qpos[2], model_.healthy_angle_range);
  }
};

}  // namespace torchpool::mujoco
