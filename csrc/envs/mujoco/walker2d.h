// walker2d.h — Walker2d-v5 (gymnasium/envs/mujoco/walker2d_v5.py) and
// Walker2d-v4 (walker2d_v4.py; what v4 does differently is in planar_walker.h).
//
// A planar two-legged walker rewarded for its x velocity and for staying
// healthy. Observation: qpos (without x by default) and qvel clipped to
// [-10, 10]. Terminates when z or the torso angle leave their healthy ranges
// (bounds exclusive). Walker2d-v5 simulates walker2d_v5.xml (both feet with
// friction 1.9); v4 simulates walker2d.xml (the right foot's 0.9).
#pragma once

#include "planar_walker.h"

namespace torchpool::mujoco {

using Walker2dModel = PlanarWalkerModel;

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
