// finger.h — the Control Suite's finger spin / turn_easy / turn_hard (dm_control/suite/finger.py).
//
// A planar two-link finger and a free-spinning body on a hinge. Spin: reward
// 1 while the body turns faster than 15 rad/s (clockwise). Turn: reward 1
// while the body's tip is inside a target placed at random on its circle
// (an edit of the model, as the lighter hinge damping of spin is).
// Observation, all from sensors: position (the finger's two joints, the
// tip relative to the hinge), velocity, touch; turn adds target_position
// and dist_to_target. Initial joints are redrawn until nothing touches (at
// most 1000 times).
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class FingerModel : public DmcModel {
 public:
  explicit FingerModel(const Config& config)
      : DmcModel(config),
        target_radius(radius_of(config.string("task_name"))),
        hinge(object_id(mj(), mjOBJ_JOINT, "hinge")),
        cap1(object_id(mj(), mjOBJ_GEOM, "cap1")),
        target_site(object_id(mj(), mjOBJ_SITE, "target")),
        proximal(sensor_adr(mj(), "proximal")),
        distal(sensor_adr(mj(), "distal")),
        tip(sensor_adr(mj(), "tip")),
        spinner(sensor_adr(mj(), "spinner")),
        target(sensor_adr(mj(), "target")),
        proximal_velocity(sensor_adr(mj(), "proximal_velocity")),
        distal_velocity(sensor_adr(mj(), "distal_velocity")),
        hinge_velocity(sensor_adr(mj(), "hinge_velocity")),
        touchtop(sensor_adr(mj(), "touchtop")),
        touchbottom(sensor_adr(mj(), "touchbottom")) {
    if (spin())
      declare_fields({{"position", {4}}, {"velocity", {3}}, {"touch", {2}}});
    else
      declare_fields(
          {{"position", {4}}, {"velocity", {3}}, {"touch", {2}}, {"target_position", {2}}, {"dist_to_target", {}}});
  }

  bool spin() const { return target_radius == 0.0; }

  const double target_radius;  // _EASY_TARGET_SIZE, _HARD_TARGET_SIZE; 0 for spin
  const int hinge, cap1, target_site;
  const int proximal, distal, tip, spinner, target, proximal_velocity, distal_velocity, hinge_velocity, touchtop,
      touchbottom;  // sensordata addresses

 private:
  static double radius_of(const std::string& task) {
    if (task == "spin") return 0.0;
    if (task == "turn_easy") return 0.07;
    if (task == "turn_hard") return 0.03;
    throw std::invalid_argument("finger has no task '" + task + "' (spin, turn_easy, turn_hard)");
  }
};

class Finger : public DmcEnv {
 public:
  using Model = FingerModel;
  explicit Finger(const Model& model) : DmcEnv(model), task_(model) {
    own_model({{&mjModel::dof_damping, static_cast<size_t>(model.mj().nv)},
               {&mjModel::site_pos, 3 * static_cast<size_t>(model.mj().nsite)},
               {&mjModel::site_size, 3 * static_cast<size_t>(model.mj().nsite)}});
    // Spin.initialize_episode sets the hinge's damping every episode, always to the same value.
    if (task_.spin()) edit_model([&](mjModel& m) { m.dof_damping[m.jnt_dofadr[task_.hinge]] = 0.03; });
  }

 private:
  void initialize_episode(Rng& rng) override {
    if (!task_.spin()) {
      // Turn.initialize_episode: the target on the spinner's circle (radius: cap1's size summed), from
      // the hinge's anchor as the reset's forward left it.
      const double angle = rng.uniform(-M_PI, M_PI);
      const double* anchor = data_->xanchor + 3 * task_.hinge;
      const double* size = model_->geom_size + 3 * task_.cap1;
      const double radius = size[0] + size[1] + size[2];
      set_target(anchor[0] + radius * std::sin(angle), anchor[2] + radius * std::cos(angle), task_.target_radius);
    }
    // _set_random_joint_angles.
    for (int attempt = 0; attempt < 1000; ++attempt) {
      randomize_limited_and_rotational_joints(rng);
      after_reset();
      if (data_->ncon == 0) return;
    }
    throw std::runtime_error("finger: could not find a collision-free state after 1000 attempts");
  }

  void write_observation(double* obs) const override {
    const double* s = data_->sensordata;
    *obs++ = s[task_.proximal];
    *obs++ = s[task_.distal];
    *obs++ = s[task_.tip] - s[task_.spinner];
    *obs++ = s[task_.tip + 2] - s[task_.spinner + 2];
    *obs++ = s[task_.proximal_velocity];
    *obs++ = s[task_.distal_velocity];
    *obs++ = s[task_.hinge_velocity];
    *obs++ = std::log1p(s[task_.touchtop]);
    *obs++ = std::log1p(s[task_.touchbottom]);
    if (task_.spin()) return;
    *obs++ = s[task_.target] - s[task_.spinner];
    *obs++ = s[task_.target + 2] - s[task_.spinner + 2];
    *obs++ = dist_to_target();
  }

  double reward() const override {
    if (task_.spin()) return data_->sensordata[task_.hinge_velocity] <= -15.0 ? 1.0 : 0.0;
    return dist_to_target() <= 0.0 ? 1.0 : 0.0;
  }

  // Physics.dist_to_target: |target - tip| (x, z, both relative to the spinner) less the target's radius.
  double dist_to_target() const {
    const double* s = data_->sensordata;
    const double dx = (s[task_.target] - s[task_.spinner]) - (s[task_.tip] - s[task_.spinner]);
    const double dz = (s[task_.target + 2] - s[task_.spinner + 2]) - (s[task_.tip + 2] - s[task_.spinner + 2]);
    return std::sqrt(dx * dx + dz * dz) - model_->site_size[3 * task_.target_site];
  }

  // Turn's target: site_pos[target] x and z, site_size[target, 0].
  size_t task_parameter_count() const override { return task_.spin() ? 0 : 3; }
  void get_task_parameters(double* out) const override {
    if (task_.spin()) return;
    out[0] = model_->site_pos[3 * task_.target_site];
    out[1] = model_->site_pos[3 * task_.target_site + 2];
    out[2] = model_->site_size[3 * task_.target_site];
  }
  void set_task_parameters(const double* in) override {
    if (!task_.spin()) set_target(in[0], in[1], in[2]);
  }

  void set_target(double x, double z, double radius) {
    edit_model([&](mjModel& m) {
      m.site_pos[3 * task_.target_site] = x;
      m.site_pos[3 * task_.target_site + 2] = z;
      m.site_size[3 * task_.target_site] = radius;
    });
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
