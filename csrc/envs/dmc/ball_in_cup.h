// ball_in_cup.h — the Control Suite's ball_in_cup catch (dm_control/suite/ball_in_cup.py).
//
// A cup on a planar arm, a ball on a string: reward 1 while the ball is
// inside the cup's target box, else 0. The ball starts at a random place
// below-beside the cup, redrawn until nothing touches. Observation:
// position, velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class BallInCupModel : public DmcModel {
 public:
  explicit BallInCupModel(const Config& config)
      : DmcModel(config),
        ball_x_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "ball_x")]),
        ball_z_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "ball_z")]),
        target(object_id(mj(), mjOBJ_SITE, "target")),
        ball_body(object_id(mj(), mjOBJ_BODY, "ball")),
        ball_geom(object_id(mj(), mjOBJ_GEOM, "ball")) {
    expect_task(config, "ball_in_cup", "catch");
    declare_fields({{"position", {nq()}}, {"velocity", {nv()}}});
  }

  const int ball_x_qpos, ball_z_qpos, target, ball_body, ball_geom;
};

class BallInCup : public DmcEnv {
 public:
  using Model = BallInCupModel;
  explicit BallInCup(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  void initialize_episode(Rng& rng) override {
    do {
      data_->qpos[task_.ball_x_qpos] = rng.uniform(-0.2, 0.2);
      data_->qpos[task_.ball_z_qpos] = rng.uniform(0.2, 0.5);
      after_reset();
    } while (data_->ncon > 0);
  }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos, model_->nq, obs);
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  // Physics.in_target: |target - ball| (x and z) below the target's half-sizes less the ball's radius.
  double reward() const override {
    const double* target = data_->site_xpos + 3 * task_.target;
    const double* ball = data_->xpos + 3 * task_.ball_body;
    const double* size = model_->site_size + 3 * task_.target;
    const double radius = model_->geom_size[3 * task_.ball_geom];
    const bool inside =
        std::fabs(target[0] - ball[0]) < size[0] - radius && std::fabs(target[2] - ball[2]) < size[2] - radius;
    return inside ? 1.0 : 0.0;
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
