// point_mass.h — the Control Suite's point_mass easy / hard (dm_control/suite/point_mass.py).
//
// A mass in a plane pushed through two tendons to a target at the origin.
// Reward: near the target (Gaussian, margin its size) x the small-control
// term. In hard, each episode turns the tendons' directions at random (two
// unit vectors at least ~25 degrees apart), an edit of the model.
// Observation: position, velocity.
#pragma once

#include <array>

#include "dmc_env.h"

namespace torchpool::dmc {

class PointMassModel : public DmcModel {
 public:
  explicit PointMassModel(const Config& config)
      : DmcModel(config),
        randomize_gains(is_hard(config.string("task_name"))),
        target(object_id(mj(), mjOBJ_GEOM, "target")),
        pointmass(object_id(mj(), mjOBJ_GEOM, "pointmass")) {
    declare_fields({{"position", {nq()}}, {"velocity", {nv()}}});
  }

  const bool randomize_gains;
  const int target, pointmass;

 private:
  static bool is_hard(const std::string& task) {
    if (task == "easy" || task == "hard") return task == "hard";
    throw std::invalid_argument("point_mass has no task '" + task + "' (easy, hard)");
  }
};

class PointMass : public DmcEnv {
 public:
  using Model = PointMassModel;
  explicit PointMass(const Model& model) : DmcEnv(model), task_(model) {
    if (task_.randomize_gains) own_model({{&mjModel::wrap_prm, static_cast<size_t>(model.mj().nwrap)}});
  }

 private:
  void initialize_episode(Rng& rng) override {
    randomize_limited_and_rotational_joints(rng);
    if (!task_.randomize_gains) return;
    double dir1[2], dir2[2];
    random_direction(rng, dir1);
    do {
      random_direction(rng, dir2);
    } while (std::fabs(dir1[0] * dir2[0] + dir1[1] * dir2[1]) > 0.9);
    set_wrap_prm({dir1[0], dir1[1], dir2[0], dir2[1]});
  }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos, model_->nq, obs);
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    const double distance =
        mujoco::distance3(data_->geom_xpos + 3 * task_.target, data_->geom_xpos + 3 * task_.pointmass);
    const double target_size = model_->geom_size[3 * task_.target];
    const double near_target = tolerance(distance, {0.0, target_size}, target_size);
    return near_target * ((mean_small_control() + 4) / 5);
  }

  // The tendon directions: model.wrap_prm[0:4].
  size_t task_parameter_count() const override { return task_.randomize_gains ? 4 : 0; }
  void get_task_parameters(double* out) const override {
    if (task_.randomize_gains) std::copy_n(model_->wrap_prm, 4, out);
  }
  void set_task_parameters(const double* in) override {
    if (task_.randomize_gains) set_wrap_prm({in[0], in[1], in[2], in[3]});
  }

  static void random_direction(Rng& rng, double* dir) {
    dir[0] = standard_normal(rng);
    dir[1] = standard_normal(rng);
    const double norm = std::sqrt(dir[0] * dir[0] + dir[1] * dir[1]);
    dir[0] /= norm;
    dir[1] /= norm;
  }

  void set_wrap_prm(std::array<double, 4> values) {
    edit_model([&](mjModel& model) { std::copy(values.begin(), values.end(), model.wrap_prm); });
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
