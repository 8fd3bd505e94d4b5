// swimmer.h — the Control Suite's swimmer6 / swimmer15 (dm_control/suite/swimmer.py).
//
// A planar chain of n links (6 or 15) in a viscous fluid, to bring its nose
// to a target placed at random each episode (an edit of the model: within
// 0.3 of the origin with probability 0.2, else within 2). Reward: long-tailed
// closeness of the nose to the target. The chain is built from swimmer.xml's
// head as dm_control's _make_model builds it in Python (on the mjSpec here).
// Observation: joints, to_target (in the head's frame, x and y),
// body_velocities (each link's x, y velocity and z angular velocity).
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class SwimmerModel : public DmcModel {
 public:
  explicit SwimmerModel(const Config& config)
      : DmcModel(config, add_links(bodies_of(config.string("task_name")))),
        head(object_id(mj(), mjOBJ_BODY, "head")),
        nose(object_id(mj(), mjOBJ_GEOM, "nose")),
        target(object_id(mj(), mjOBJ_GEOM, "target")),
        target_light(object_id(mj(), mjOBJ_LIGHT, "target_light")) {
    const int bodies = bodies_of(config.string("task_name"));
    declare_fields({{"joints", {nq() - 3}}, {"to_target", {2}}, {"body_velocities", {3 * bodies}}});
  }

  const int head, nose, target, target_light;

 private:
  static int bodies_of(const std::string& task) {
    if (task == "swimmer6") return 6;
    if (task == "swimmer15") return 15;
    throw std::invalid_argument("swimmer has no task '" + task + "' (swimmer6, swimmer15)");
  }

  // swimmer._make_model(n_bodies): n - 1 links segment_i (pos 0 .1 0; a visual and an inertial geom, a site,
  // a hinge limited to +-360/n degrees) chained under the head, a motor and a velocimeter and gyro on each,
  // appended after the file's actuators and sensors. (The trackcom cameras it moves are left: only
  // rendering reads them.)
  static SpecEdit add_links(int bodies) {
    return [bodies](mjSpec& spec) {
      mjsDefault* swimmer = spec_default(spec, "swimmer");
      mjsDefault* visual = spec_default(spec, "visual");
      mjsDefault* inertial = spec_default(spec, "inertial");
      mjsDefault* main = spec_default(spec, "main");
      mjsBody* parent = mjs_findBody(&spec, "head");
      if (parent == nullptr) throw std::invalid_argument("swimmer.xml has no body head");
      const double limit = 360.0 / bodies;
      for (int index = 0; index < bodies - 1; ++index) {
        const std::string i = std::to_string(index);
        mjsBody* child = mjs_addBody(parent, swimmer);
        mjs_setName(child->element, ("segment_" + i).c_str());
        child->pos[0] = 0, child->pos[1] = 0.1, child->pos[2] = 0;
        mjs_setName(mjs_addGeom(child, visual)->element, ("visual_" + i).c_str());
        mjs_setName(mjs_addGeom(child, inertial)->element, ("inertial_" + i).c_str());
        mjs_setName(mjs_addSite(child, swimmer)->element, ("site_" + i).c_str());
        mjsJoint* joint = mjs_addJoint(child, swimmer);
        mjs_setName(joint->element, ("joint_" + i).c_str());
        joint->range[0] = -limit, joint->range[1] = limit;
        mjsActuator* motor = mjs_addActuator(&spec, main);
        mjs_setName(motor->element, ("motor_" + i).c_str());
        motor->trntype = mjTRN_JOINT;
        mjs_setString(motor->target, ("joint_" + i).c_str());
        for (mjtSensor type : {mjSENS_VELOCIMETER, mjSENS_GYRO}) {
          mjsSensor* sensor = mjs_addSensor(&spec);
          mjs_setName(sensor->element, ((type == mjSENS_VELOCIMETER ? "velocimeter_" : "gyro_") + i).c_str());
          sensor->type = type;
          sensor->objtype = mjOBJ_SITE;
          mjs_setString(sensor->objname, ("site_" + i).c_str());
        }
        parent = child;
      }
    };
  }
};

class Swimmer : public DmcEnv {
 public:
  using Model = SwimmerModel;
  explicit Swimmer(const Model& model) : DmcEnv(model), task_(model) {
    own_model({{&mjModel::geom_pos, 3 * static_cast<size_t>(model.mj().ngeom)},
               {&mjModel::light_pos, 3 * static_cast<size_t>(model.mj().nlight)}});
  }

 private:
  void initialize_episode(Rng& rng) override {
    randomize_limited_and_rotational_joints(rng);
    const bool close_target = rng.uniform(0.0, 1.0) < 0.2;
    const double box = close_target ? 0.3 : 2.0;
    const double x = rng.uniform(-box, box), y = rng.uniform(-box, box);
    set_target(x, y);
  }

  void write_observation(double* obs) const override {
    obs = std::copy_n(data_->qpos + 3, model_->nq - 3, obs);
    double to_target[3];
    nose_to_target(to_target);
    *obs++ = to_target[0];
    *obs++ = to_target[1];
    // sensordata[12:] as rows of 6 (velocimeter, gyro): each row's [0, 1, 5].
    const int rows = (model_->nsensordata - 12) / 6;
    for (int row = 0; row < rows; ++row) {
      const double* values = data_->sensordata + 12 + 6 * row;
      *obs++ = values[0];
      *obs++ = values[1];
      *obs++ = values[5];
    }
  }

  double reward() const override {
    double to_target[3];
    nose_to_target(to_target);
    const double size = model_->geom_size[3 * task_.target];
    return tolerance(std::sqrt(to_target[0] * to_target[0] + to_target[1] * to_target[1]), {0.0, size}, 5 * size,
                     Sigmoid::LongTail);
  }

  // Physics.nose_to_target: (target - nose) as a row vector times the head's frame (x and y are used).
  void nose_to_target(double* out) const {
    in_frame(data_->geom_xpos + 3 * task_.target, data_->geom_xpos + 3 * task_.nose, data_->xmat + 9 * task_.head, out);
  }

  // The target's x and y: geom_pos[target] (its light follows it).
  size_t task_parameter_count() const override { return 2; }
  void get_task_parameters(double* out) const override {
    out[0] = model_->geom_pos[3 * task_.target];
    out[1] = model_->geom_pos[3 * task_.target + 1];
  }
  void set_task_parameters(const double* in) override { set_target(in[0], in[1]); }

  void set_target(double x, double y) {
    edit_model([&](mjModel& m) {
      m.geom_pos[3 * task_.target] = x, m.geom_pos[3 * task_.target + 1] = y;
      m.light_pos[3 * task_.target_light] = x, m.light_pos[3 * task_.target_light + 1] = y;
    });
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
