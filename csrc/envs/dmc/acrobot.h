// acrobot.h — the Control Suite's acrobot swingup / swingup_sparse (dm_control/suite/acrobot.py).
//
// A two-link pendulum actuated at the elbow, to bring its tip to a target
// above. Reward: tolerance of the tip-target distance within the target's
// radius (Gaussian margin 1; none when sparse). Observation: orientations
// (both links' xz, then both zz), velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class AcrobotModel : public DmcModel {
 public:
  explicit AcrobotModel(const Config& config)
      : DmcModel(config),
        sparse(is_sparse(config.string("task_name"))),
        upper_arm(object_id(mj(), mjOBJ_BODY, "upper_arm")),
        lower_arm(object_id(mj(), mjOBJ_BODY, "lower_arm")),
        shoulder_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "shoulder")]),
        elbow_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "elbow")]),
        target(object_id(mj(), mjOBJ_SITE, "target")),
        tip(object_id(mj(), mjOBJ_SITE, "tip")) {
    declare_fields({{"orientations", {4}}, {"velocity", {nv()}}});
  }

  const bool sparse;
  const int upper_arm, lower_arm, shoulder_qpos, elbow_qpos, target, tip;

 private:
  static bool is_sparse(const std::string& task) {
    if (task == "swingup" || task == "swingup_sparse") return task == "swingup_sparse";
    throw std::invalid_argument("acrobot has no task '" + task + "' (swingup, swingup_sparse)");
  }
};

class Acrobot : public DmcEnv {
 public:
  using Model = AcrobotModel;
  explicit Acrobot(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  // Balance.initialize_episode: shoulder and elbow uniform in [-pi, pi), one draw of two.
  void initialize_episode(Rng& rng) override {
    data_->qpos[task_.shoulder_qpos] = rng.uniform(-M_PI, M_PI);
    data_->qpos[task_.elbow_qpos] = rng.uniform(-M_PI, M_PI);
  }

  void write_observation(double* obs) const override {
    obs[0] = xmat(task_.upper_arm, kXZ);
    obs[1] = xmat(task_.lower_arm, kXZ);
    obs[2] = xmat(task_.upper_arm, kZZ);
    obs[3] = xmat(task_.lower_arm, kZZ);
    std::copy_n(data_->qvel, model_->nv, obs + 4);
  }

  double reward() const override {
    const double distance = mujoco::distance3(data_->site_xpos + 3 * task_.target, data_->site_xpos + 3 * task_.tip);
    const double target_radius = model_->site_size[3 * task_.target];
    return tolerance(distance, {0.0, target_radius}, task_.sparse ? 0.0 : 1.0);
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
