// reacher.h — the Control Suite's reacher easy / hard (dm_control/suite/reacher.py).
//
// A two-link planar arm to touch a target placed at random each episode (an
// edit of the model: its size, 0.05 or 0.015, and position). Reward 1 while
// the finger touches the target. Observation: position, to_target (finger to
// target, x and y), velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class ReacherModel : public DmcModel {
 public:
  explicit ReacherModel(const Config& config)
      : DmcModel(config),
        target_size(size_of(config.string("task_name"))),
        target(object_id(mj(), mjOBJ_GEOM, "target")),
        finger(object_id(mj(), mjOBJ_GEOM, "finger")) {
    declare_fields({{"position", {nq()}}, {"to_target", {2}}, {"velocity", {nv()}}});
  }

  const double target_size;
  const int target, finger;

 private:
  static double size_of(const std::string& task) {
    if (task == "easy") return 0.05;   // _BIG_TARGET
    if (task == "hard") return 0.015;  // _SMALL_TARGET
    throw std::invalid_argument("reacher has no task '" + task + "' (easy, hard)");
  }
};

class Reacher : public DmcEnv {
 public:
  using Model = ReacherModel;
  explicit Reacher(const Model& model) : DmcEnv(model), task_(model) {
    own_model({{&mjModel::geom_size, 3 * static_cast<size_t>(model.mj().ngeom)},
               {&mjModel::geom_pos, 3 * static_cast<size_t>(model.mj().ngeom)}});
  }

 private:
  // Reacher.initialize_episode: the target's size, the arm's joints, then the target at a random
  // angle and radius (x = r sin, y = r cos).
  void initialize_episode(Rng& rng) override {
    randomize_limited_and_rotational_joints(rng);
    const double angle = rng.uniform(0.0, 2 * M_PI), radius = rng.uniform(0.05, 0.2);
    set_target(task_.target_size, radius * std::sin(angle), radius * std::cos(angle));
  }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos, model_->nq, obs);
    *obs++ = data_->geom_xpos[3 * task_.target] - data_->geom_xpos[3 * task_.finger];
    *obs++ = data_->geom_xpos[3 * task_.target + 1] - data_->geom_xpos[3 * task_.finger + 1];
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    const double dx = data_->geom_xpos[3 * task_.target] - data_->geom_xpos[3 * task_.finger];
    const double dy = data_->geom_xpos[3 * task_.target + 1] - data_->geom_xpos[3 * task_.finger + 1];
    const double radii = model_->geom_size[3 * task_.target] + model_->geom_size[3 * task_.finger];
    return tolerance(std::sqrt(dx * dx + dy * dy), {0.0, radii});
  }

  // The target's size and x, y: geom_size[target, 0], geom_pos[target, 0:2].
  size_t task_parameter_count() const override { return 3; }
  void get_task_parameters(double* out) const override {
    out[0] = model_->geom_size[3 * task_.target];
    out[1] = model_->geom_pos[3 * task_.target];
    out[2] = model_->geom_pos[3 * task_.target + 1];
  }
  void set_task_parameters(const double* in) override { set_target(in[0], in[1], in[2]); }

  void set_target(double size, double x, double y) {
    edit_model([&](mjModel& model) {
      model.geom_size[3 * task_.target] = size;
      model.geom_pos[3 * task_.target] = x;
      model.geom_pos[3 * task_.target + 1] = y;
    });
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
