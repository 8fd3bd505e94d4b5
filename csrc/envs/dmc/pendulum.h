// pendulum.h — the Control Suite's pendulum swingup (dm_control/suite/pendulum.py).
//
// A pole on a hinge with a torque too weak to lift it at once. Reward 1
// while the pole is within 8 degrees of upright, else 0. Observation:
// orientation (the pole's zz, xz), velocity (the hinge's).
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class PendulumModel : public DmcModel {
 public:
  explicit PendulumModel(const Config& config)
      : DmcModel(config),
        pole(object_id(mj(), mjOBJ_BODY, "pole")),
        hinge_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "hinge")]) {
    expect_task(config, "pendulum", "swingup");
    declare_fields({{"orientation", {2}}, {"velocity", {1}}});
  }

  const int pole, hinge_qpos;
};

class Pendulum : public DmcEnv {
 public:
  using Model = PendulumModel;
  explicit Pendulum(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  // SwingUp.initialize_episode: the pole at a uniform angle in [-pi, pi).
  void initialize_episode(Rng& rng) override { data_->qpos[task_.hinge_qpos] = rng.uniform(-M_PI, M_PI); }

  void write_observation(double* obs) const override {
    obs[0] = xmat(task_.pole, kZZ);
    obs[1] = xmat(task_.pole, kXZ);
    obs[2] = data_->qvel[0];
  }

  // _COSINE_BOUND = np.cos(np.deg2rad(8)); deg2rad multiplies by pi / 180.
  double reward() const override {
    static const double cosine_bound = std::cos(8.0 * (M_PI / 180.0));
    return tolerance(xmat(task_.pole, kZZ), {cosine_bound, 1.0});
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
