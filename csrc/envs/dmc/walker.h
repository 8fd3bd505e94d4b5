// walker.h — the Control Suite's walker stand / walk / run (dm_control/suite/walker.py).
//
// A planar biped. Reward: (3 * standing (torso height >= 1.2, Gaussian margin
// 0.6) + uprightness) / 4, times (5 * speed term + 1) / 6 when it must move (at
// 1 or 8 m/s). Observation: orientations (each body's xx, xz), height, velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class WalkerModel : public DmcModel {
 public:
  explicit WalkerModel(const Config& config)
      : DmcModel(config),
        move_speed(task_speed(config.string("task_name"))),
        torso(object_id(mj(), mjOBJ_BODY, "torso")),
        speed_sensor(sensor_adr(mj(), "torso_subtreelinvel")) {
    declare_fields({{"orientations", {2 * (nbody() - 1)}}, {"height", {}}, {"velocity", {nv()}}});
  }

  const double move_speed;  // _WALK_SPEED, _RUN_SPEED; 0 for stand
  const int torso, speed_sensor;

 private:
  static double task_speed(const std::string& task) {
    if (task == "stand") return 0.0;
    if (task == "walk") return 1.0;
    if (task == "run") return 8.0;
    throw std::invalid_argument("walker has no task '" + task + "' (stand, walk, run)");
  }
};

class Walker : public DmcEnv {
 public:
  using Model = WalkerModel;
  explicit Walker(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  void initialize_episode(Rng& rng) override { randomize_limited_and_rotational_joints(rng); }

  void write_observation(double* obs) const override {
    for (int body = 1; body < model_->nbody; ++body) {
      *obs++ = xmat(body, kXX);
      *obs++ = xmat(body, kXZ);
    }
    *obs++ = torso_height();
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    const double standing = tolerance(torso_height(), {1.2, kInf}, 1.2 / 2);
    const double upright = (1 + xmat(task_.torso, kZZ)) / 2;
    const double stand_reward = (3 * standing + upright) / 4;
    if (task_.move_speed == 0.0) return stand_reward;
    const double move_reward = tolerance(data_->sensordata[task_.speed_sensor], {task_.move_speed, kInf},
                                         task_.move_speed / 2, Sigmoid::Linear, 0.5);
    return stand_reward * (5 * move_reward + 1) / 6;
  }

  double torso_height() const { return data_->xpos[3 * task_.torso + 2]; }

  const Model& task_;
};

}  // namespace torchpool::dmc
