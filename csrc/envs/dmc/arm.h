// arm.h — what manipulator and stacker share (dm_control/suite/manipulator.py and stacker.py each carry
// their own copy): the planar arm and two-finger hand of manipulator.xml and stacker.xml, its random
// joints, its observation, and Physics.body_2d_pose.
#pragma once

#include <cmath>
#include <vector>

#include "dmc_env.h"

namespace torchpool::dmc {

class Arm {
 public:
  explicit Arm(const mjModel& model) {
    for (const char* joint :
         {"arm_root", "arm_shoulder", "arm_elbow", "arm_wrist", "finger", "fingertip", "thumb", "thumbtip"})
      joints_.push_back(object_id(model, mjOBJ_JOINT, joint));
  }

  // The episodes' first draws: each of _ARM_JOINTS uniform in its range (unlimited: [-pi, pi)), one
  // vector draw in joint order; then the finger mirrors the thumb.
  void randomize(const mjModel& model, mjData& data, Rng& rng) const {
    for (int joint : joints_) {
      const bool limited = model.jnt_limited[joint] != 0;
      data.qpos[model.jnt_qposadr[joint]] =
          rng.uniform(limited ? model.jnt_range[2 * joint] : -M_PI, limited ? model.jnt_range[2 * joint + 1] : M_PI);
    }
    data.qpos[model.jnt_qposadr[joints_[4]]] = data.qpos[model.jnt_qposadr[joints_[6]]];  // finger = thumb
  }

  // arm_pos (each joint's sin, cos) and arm_vel; returns where the rest goes.
  double* observe(const mjModel& model, const mjData& data, double* obs) const {
    for (int joint : joints_) {
      const double angle = data.qpos[model.jnt_qposadr[joint]];
      *obs++ = std::sin(angle);
      *obs++ = std::cos(angle);
    }
    for (int joint : joints_) *obs++ = data.qvel[model.jnt_dofadr[joint]];
    return obs;
  }

 private:
  std::vector<int> joints_;  // _ARM_JOINTS
};

// Physics.body_2d_pose: x, z of xpos, qw, qy of xquat; returns where the rest goes.
inline double* body_2d_pose(const mjData& data, int body, double* obs) {
  *obs++ = data.xpos[3 * body];
  *obs++ = data.xpos[3 * body + 2];
  *obs++ = data.xquat[4 * body];
  *obs++ = data.xquat[4 * body + 2];
  return obs;
}

}  // namespace torchpool::dmc
