// manipulator.h — the Control Suite's manipulator bring_ball / bring_peg /
// insert_ball / insert_peg (dm_control/suite/manipulator.py).
//
// A planar arm with a two-finger hand, to bring an object (a ball or a peg)
// to a target pose placed at random each episode (insert: into a receptacle,
// a cup or a slot, placed with it). manipulator.xml carries every prop; the
// model keeps only the task's (make_model, here on the mjSpec). Reward: the
// object close to the target (a peg: blade and tip, or a third of it for
// holding the peg). Each episode draws the arm's joints, the target and the
// object (in the hand 10%, at the target 10%, anywhere 80%, thrown
// sideways) until nothing touches; the object's throw speed is not cleared
// between draws, as in dm_control. Observation: arm_pos (sin, cos of the 8
// arm joints), arm_vel, touch (log1p of 5 sensors), hand_pos, object_pos,
// object_vel, target_pos (x, z, qw, qy poses).
#pragma once

#include <array>

#include "arm.h"
#include "dmc_env.h"

namespace torchpool::dmc {

class ManipulatorModel : public DmcModel {
 public:
  explicit ManipulatorModel(const Config& config)
      : DmcModel(config, keep_props(uses_peg(config.string("task_name")), inserts(config.string("task_name")))),
        use_peg(uses_peg(config.string("task_name"))),
        insert(inserts(config.string("task_name"))),
        hand(object_id(mj(), mjOBJ_BODY, "hand")),
        object(object_id(mj(), mjOBJ_BODY, use_peg ? "peg" : "ball")),
        target(object_id(mj(), mjOBJ_BODY, use_peg ? "target_peg" : "target_ball")),
        receptacle(insert ? object_id(mj(), mjOBJ_BODY, use_peg ? "slot" : "cup") : -1),
        grasp_site(object_id(mj(), mjOBJ_SITE, "grasp")) {
    const std::string prefix = use_peg ? "peg" : "ball";
    for (const char* axis : {"_x", "_z", "_y"}) object_joints.push_back(object_id(mj(), mjOBJ_JOINT, prefix + axis));
    for (const char* sensor : {"palm_touch", "finger_touch", "thumb_touch", "fingertip_touch", "thumbtip_touch"})
      touch.push_back(sensor_adr(mj(), sensor));
    auto site = [&](const char* name) { return object_id(mj(), mjOBJ_SITE, name); };
    if (use_peg) {
      sites = {site("peg_grasp"), site("grasp"),      site("peg_pinch"),      site("pinch"),
               site("peg"),       site("target_peg"), site("target_peg_tip"), site("peg_tip")};
    } else {
      sites = {site("ball"), site("target_ball")};
    }
    declare_fields({{"arm_pos", {8, 2}},
                    {"arm_vel", {8}},
                    {"touch", {5}},
                    {"hand_pos", {4}},
                    {"object_pos", {4}},
                    {"object_vel", {3}},
                    {"target_pos", {4}}});
  }

  int qpos(int joint) const { return mj().jnt_qposadr[joint]; }
  int dof(int joint) const { return mj().jnt_dofadr[joint]; }

  const bool use_peg, insert;
  const int hand, object, target, receptacle, grasp_site;
  const Arm arm{mj()};
  std::vector<int> object_joints;  // <object>_x, _z, _y (dm_control's order)
  std::vector<int> touch;          // sensordata addresses of _TOUCH_SENSORS
  std::vector<int> sites;          // the reward's site pairs, in its order

 private:
  static bool uses_peg(const std::string& task) {
    if (task == "bring_ball" || task == "insert_ball") return false;
    if (task == "bring_peg" || task == "insert_peg") return true;
    throw std::invalid_argument("manipulator has no task '" + task +
                                "' (bring_ball, bring_peg, insert_ball, insert_peg)");
  }
  static bool inserts(const std::string& task) { return task.starts_with("insert_"); }

  // make_model: removes every prop body the task does not use.
  static SpecEdit keep_props(bool use_peg, bool insert) {
    return [use_peg, insert](mjSpec& spec) {
      std::vector<std::string> keep =
          use_peg ? std::vector<std::string>{"peg", "target_peg"} : std::vector<std::string>{"ball", "target_ball"};
      if (insert) keep.push_back(use_peg ? "slot" : "cup");
      for (const char* prop : {"ball", "target_ball", "cup", "peg", "target_peg", "slot"}) {
        if (std::find(keep.begin(), keep.end(), prop) != keep.end()) continue;
        mjsBody* body = mjs_findBody(&spec, prop);
        if (body == nullptr) throw std::invalid_argument(std::string("manipulator.xml has no body ") + prop);
        if (mjs_delete(&spec, body->element) != 0) throw std::runtime_error(mjs_getError(&spec));
      }
    };
  }
};

class Manipulator : public DmcEnv {
 public:
  using Model = ManipulatorModel;
  explicit Manipulator(const Model& model) : DmcEnv(model), task_(model) {
    own_model({{&mjModel::body_pos, 3 * static_cast<size_t>(model.mj().nbody)},
               {&mjModel::body_quat, 4 * static_cast<size_t>(model.mj().nbody)}});
  }

 private:
  // Bring.initialize_episode; draws in its order.
  void initialize_episode(Rng& rng) override {
    double* qpos = data_->qpos;
    do {
      task_.arm.randomize(*model_, *data_, rng);
      const double target_x = rng.uniform(-0.4, 0.4), target_z = rng.uniform(0.1, 0.4);
      double target_angle;
      if (task_.insert) {
        target_angle = rng.uniform(-M_PI / 3, M_PI / 3);
        set_pose(task_.receptacle, target_x, target_z, target_angle);
      } else {
        target_angle = rng.uniform(-M_PI, M_PI);
      }
      set_pose(task_.target, target_x, target_z, target_angle);
      // random.choice(['in_hand', 'in_target', 'uniform'], p=[.1, .1, .8]): one uniform against the CDF.
      const double choice = rng.uniform(0.0, 1.0);
      double object_x, object_z, object_angle;
      if (choice >= 0.1 && choice < 0.2) {  // in_target
        object_x = target_x, object_z = target_z, object_angle = target_angle;
      } else if (choice < 0.1) {  // in_hand
        after_reset();
        const double* grasp = data_->site_xpos + 3 * task_.grasp_site;
        const double* frame = data_->site_xmat + 9 * task_.grasp_site;
        object_x = grasp[0], object_z = grasp[2];
        object_angle = M_PI - std::atan2(frame[kZX], frame[kXX]);
      } else {  // uniform
        object_x = rng.uniform(-0.5, 0.5);
        object_z = rng.uniform(0.0, 0.7);
        object_angle = rng.uniform(0.0, 2 * M_PI);
        data_->qvel[task_.dof(task_.object_joints[0])] = rng.uniform(-5.0, 5.0);
      }
      qpos[task_.qpos(task_.object_joints[0])] = object_x;
      qpos[task_.qpos(task_.object_joints[1])] = object_z;
      qpos[task_.qpos(task_.object_joints[2])] = object_angle;
      after_reset();
    } while (data_->ncon > 0);
  }

  void write_observation(double* obs) const override {
    obs = task_.arm.observe(*model_, *data_, obs);
    for (int adr : task_.touch) *obs++ = std::log1p(data_->sensordata[adr]);
    obs = body_2d_pose(*data_, task_.hand, obs);
    obs = body_2d_pose(*data_, task_.object, obs);
    for (int joint : task_.object_joints) *obs++ = data_->qvel[task_.dof(joint)];
    body_2d_pose(*data_, task_.target, obs);
  }

  double reward() const override {
    auto close = [&](int pair) {  // _is_close(site_distance(site1, site2))
      const double distance = mujoco::distance3(data_->site_xpos + 3 * task_.sites[2 * pair],
                                                data_->site_xpos + 3 * task_.sites[2 * pair + 1]);
      return tolerance(distance, {0.0, 0.01}, 0.02);
    };
    if (!task_.use_peg) return close(0);
    const double grasping = (close(0) + close(1)) / 2;
    const double bringing = (close(2) + close(3)) / 2;
    return std::max(bringing, grasping / 3);
  }

  // model.body_pos[body, [x, z]] and body_quat[body, [qw, qy]] = cos, sin of half the angle.
  void set_pose(int body, double x, double z, double angle) {
    set_pose_values(body, {x, z, std::cos(angle / 2), std::sin(angle / 2)});
  }
  void set_pose_values(int body, std::array<double, 4> values) {
    edit_model([&](mjModel& m) {
      m.body_pos[3 * body] = values[0], m.body_pos[3 * body + 2] = values[1];
      m.body_quat[4 * body] = values[2], m.body_quat[4 * body + 2] = values[3];
    });
  }

  // The target's (and the receptacle's) x, z, qw, qy.
  size_t task_parameter_count() const override { return task_.insert ? 8 : 4; }
  void get_task_parameters(double* out) const override {
    for (int body : {task_.target, task_.receptacle}) {
      if (body < 0) break;
      *out++ = model_->body_pos[3 * body], *out++ = model_->body_pos[3 * body + 2];
      *out++ = model_->body_quat[4 * body], *out++ = model_->body_quat[4 * body + 2];
    }
  }
  void set_task_parameters(const double* in) override {
    set_pose_values(task_.target, {in[0], in[1], in[2], in[3]});
    if (task_.insert) set_pose_values(task_.receptacle, {in[4], in[5], in[6], in[7]});
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
