// hopper.h — the Control Suite's hopper stand / hop (dm_control/suite/hopper.py).
//
// A planar one-legged hopper. Reward: standing (torso above the foot by
// 0.6-2) times, for hop, a linear term for hopping at >= 2 m/s, or, for
// stand, the small-control term. Observation: position (qpos without x),
// velocity, touch (log1p of the toe's and heel's touch sensors).
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class HopperModel : public DmcModel {
 public:
  explicit HopperModel(const Config& config)
      : DmcModel(config),
        hopping(is_hop(config.string("task_name"))),
        torso(object_id(mj(), mjOBJ_BODY, "torso")),
        foot(object_id(mj(), mjOBJ_BODY, "foot")),
        speed_sensor(sensor_adr(mj(), "torso_subtreelinvel")),
        toe_sensor(sensor_adr(mj(), "touch_toe")),
        heel_sensor(sensor_adr(mj(), "touch_heel")) {
    declare_fields({{"position", {nq() - 1}}, {"velocity", {nv()}}, {"touch", {2}}});
  }

  const bool hopping;
  const int torso, foot, speed_sensor, toe_sensor, heel_sensor;

 private:
  static bool is_hop(const std::string& task) {
    if (task == "stand" || task == "hop") return task == "hop";
    throw std::invalid_argument("hopper has no task '" + task + "' (stand, hop)");
  }
};

class Hopper : public DmcEnv {
 public:
  using Model = HopperModel;
  explicit Hopper(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  void initialize_episode(Rng& rng) override { randomize_limited_and_rotational_joints(rng); }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos + 1, model_->nq - 1, obs);
    obs = std::copy_n(data_->qvel, model_->nv, obs);
    obs[0] = std::log1p(data_->sensordata[task_.toe_sensor]);
    obs[1] = std::log1p(data_->sensordata[task_.heel_sensor]);
  }

  double reward() const override {
    // Physics.height: the z of the torso's and the foot's centres of mass (xipos).
    const double height = data_->xipos[3 * task_.torso + 2] - data_->xipos[3 * task_.foot + 2];
    const double standing = tolerance(height, {0.6, 2.0});
    if (task_.hopping)
      return standing * tolerance(data_->sensordata[task_.speed_sensor], {2.0, kInf}, 1.0, Sigmoid::Linear, 0.5);
    return standing * ((mean_small_control() + 4) / 5);
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
