// hopper.h — Hopper-v5 (gymnasium/envs/mujoco/hopper_v5.py) and Hopper-v4
// (hopper_v4.py; what v4 does differently is in planar_walker.h).
//
// A planar one-legged hopper rewarded for its x velocity and for staying
// healthy. Observation: qpos (without x by default) and qvel clipped to
// [-10, 10]. Terminates when unhealthy: state[2:] outside healthy_state_range,
// z outside healthy_z_range or the torso angle outside healthy_angle_range
// (all bounds exclusive).
#pragma once

#include "planar_walker.h"

namespace torchpool::mujoco {

class HopperModel : public PlanarWalkerModel {
 public:
  explicit HopperModel(const Config& config)
      : PlanarWalkerModel(config), healthy_state_range(range_kwarg(config, "healthy_state_range")) {}

  const Range healthy_state_range;
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
