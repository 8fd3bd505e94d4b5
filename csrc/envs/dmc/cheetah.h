// cheetah.h — the Control Suite's cheetah run (dm_control/suite/cheetah.py).
//
// A planar runner rewarded linearly for its torso's subtree velocity up to
// 10 m/s. Observation: position (qpos without x), velocity (qvel). Each
// episode starts from random joint angles and lets the body settle for 200
// physics steps with zero control.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class CheetahModel : public DmcModel {
 public:
  explicit CheetahModel(const Config& config)
      : DmcModel(config), speed_sensor(sensor_adr(mj(), "torso_subtreelinvel")) {
    expect_task(config, "cheetah", "run");
    if (nq() != mj().njnt) throw std::invalid_argument("cheetah: expected one qpos per joint");
    declare_fields({{"position", {nq() - 1}}, {"velocity", {nv()}}});
  }

  const int speed_sensor;
};

class Cheetah : public DmcEnv {
 public:
  using Model = CheetahModel;
  explicit Cheetah(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  // Cheetah.initialize_episode: limited joints uniform in their ranges (in joint order), 200 physics
  // steps with zero control, then the clock back to 0.
  void initialize_episode(Rng& rng) override {
    for (int j = 0; j < model_->njnt; ++j)
      if (model_->jnt_limited[j] == 1)
        data_->qpos[j] = rng.uniform(model_->jnt_range[2 * j], model_->jnt_range[2 * j + 1]);
    physics_step(200);
    data_->time = 0.0;
  }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos + 1, model_->nq - 1, obs);
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    return tolerance(data_->sensordata[task_.speed_sensor], {10.0, kInf}, 10.0, Sigmoid::Linear, 0.0);
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
