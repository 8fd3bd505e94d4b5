// fish.h — the Control Suite's fish upright / swim (dm_control/suite/fish.py).
//
// A fish in a fluid (MuJoCo's drag model). Upright: keep the torso upright.
// Swim: bring the mouth to a target placed at random each episode (an edit
// of the model), mostly, and stay upright a little. The body starts at a
// random orientation (a normalised Gaussian quaternion) with the fin and tail
// joints within +-0.2. Observation: joint_angles, upright, (swim: target, the
// target in the mouth's frame), velocity. No termination.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class FishModel : public DmcModel {
 public:
  explicit FishModel(const Config& config)
      : DmcModel(config),
        swim(is_swim(config.string("task_name"))),
        root_qpos(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, "root")]),
        torso(object_id(mj(), mjOBJ_BODY, "torso")),
        mouth(object_id(mj(), mjOBJ_GEOM, "mouth")),
        target(object_id(mj(), mjOBJ_GEOM, "target")) {
    for (const char* joint :
         {"tail1", "tail_twist", "tail2", "finright_roll", "finright_pitch", "finleft_roll", "finleft_pitch"})
      joint_qpos.push_back(mj().jnt_qposadr[object_id(mj(), mjOBJ_JOINT, joint)]);
    if (swim)
      declare_fields({{"joint_angles", {7}}, {"upright", {}}, {"target", {3}}, {"velocity", {nv()}}});
    else
      declare_fields({{"joint_angles", {7}}, {"upright", {}}, {"velocity", {nv()}}});
  }

  const bool swim;
  const int root_qpos, torso, mouth, target;
  std::vector<int> joint_qpos;  // _JOINTS, in that order

 private:
  static bool is_swim(const std::string& task) {
    if (task == "upright" || task == "swim") return task == "swim";
    throw std::invalid_argument("fish has no task '" + task + "' (upright, swim)");
  }
};

class Fish : public DmcEnv {
 public:
  using Model = FishModel;
  explicit Fish(const Model& model) : DmcEnv(model), task_(model) {
    if (task_.swim) own_model({{&mjModel::geom_pos, 3 * static_cast<size_t>(model.mj().ngeom)}});
  }

 private:
  void initialize_episode(Rng& rng) override {
    normalised_into(data_->qpos + task_.root_qpos + 3, [&] { return standard_normal(rng); });
    for (int adr : task_.joint_qpos) data_->qpos[adr] = rng.uniform(-0.2, 0.2);
    if (!task_.swim) return;
    const double x = rng.uniform(-0.4, 0.4), y = rng.uniform(-0.4, 0.4), z = rng.uniform(0.1, 0.3);
    set_target(x, y, z);
  }

  void write_observation(double* obs) const override {
    for (int adr : task_.joint_qpos) *obs++ = data_->qpos[adr];
    *obs++ = xmat(task_.torso, kZZ);
    if (task_.swim) {
      double to_target[3];
      mouth_to_target(to_target);
      obs = std::copy_n(to_target, 3, obs);
    }
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    const double upright = xmat(task_.torso, kZZ);
    if (!task_.swim) return tolerance(upright, {1.0, 1.0}, 1.0);
    double to_target[3];
    mouth_to_target(to_target);
    const double radii = model_->geom_size[3 * task_.mouth] + model_->geom_size[3 * task_.target];
    const double distance =
        std::sqrt(to_target[0] * to_target[0] + to_target[1] * to_target[1] + to_target[2] * to_target[2]);
    const double in_target = tolerance(distance, {0.0, radii}, 2 * radii);
    const double is_upright = 0.5 * (upright + 1);
    return (7 * in_target + is_upright) / 8;
  }

  // Physics.mouth_to_target: (target - mouth) as a row vector times the mouth's frame (geom_xmat).
  void mouth_to_target(double* out) const {
    in_frame(data_->geom_xpos + 3 * task_.target, data_->geom_xpos + 3 * task_.mouth,
             data_->geom_xmat + 9 * task_.mouth, out);
  }

  // Swim's target position: geom_pos[target].
  size_t task_parameter_count() const override { return task_.swim ? 3 : 0; }
  void get_task_parameters(double* out) const override {
    if (task_.swim) std::copy_n(model_->geom_pos + 3 * task_.target, 3, out);
  }
  void set_task_parameters(const double* in) override {
    if (task_.swim) set_target(in[0], in[1], in[2]);
  }

  void set_target(double x, double y, double z) {
    edit_model([&](mjModel& model) {
      double* pos = model.geom_pos + 3 * task_.target;
      pos[0] = x;
      pos[1] = y;
      pos[2] = z;
    });
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
