// stacker.h — the Control Suite's stacker stack_2 / stack_4 (dm_control/suite/stacker.py).
//
// manipulator's arm and hand with 2 or 4 boxes (stacker.xml has 4; the model
// keeps the first n, make_model here on the mjSpec), to put a box on a target
// floating at a random height of the stack (an edit of the model) and move
// the hand away. Reward: the nearest box close to the target (Gaussian,
// margin two box sizes) x the hand at least 0.1 from it. Each episode draws
// the arm's joints, the target and the boxes until nothing touches.
// Observation: arm_pos (sin, cos of the 8 arm joints), arm_vel, touch (log1p
// of every sensor), hand_pos, box_pos (x, z, qw, qy per box), box_vel (each
// box's x, y, z joints), target_pos (x, z).
#pragma once

#include "arm.h"
#include "dmc_env.h"

namespace torchpool::dmc {

class StackerModel : public DmcModel {
 public:
  explicit StackerModel(const Config& config)
      : DmcModel(config, keep_boxes(boxes_of(config.string("task_name")))),
        boxes(boxes_of(config.string("task_name"))),
        hand(object_id(mj(), mjOBJ_BODY, "hand")),
        target(object_id(mj(), mjOBJ_BODY, "target")),
        target_geom(object_id(mj(), mjOBJ_GEOM, "target")),
        target_site(object_id(mj(), mjOBJ_SITE, "target")),
        grasp_site(object_id(mj(), mjOBJ_SITE, "grasp")) {
    for (int b = 0; b < boxes; ++b) {
      const std::string name = "box" + std::to_string(b);
      box_bodies.push_back(object_id(mj(), mjOBJ_BODY, name));
      box_sites.push_back(object_id(mj(), mjOBJ_SITE, name));
      for (const char* axis : {"_x", "_y", "_z"}) box_joints.push_back(object_id(mj(), mjOBJ_JOINT, name + axis));
    }
    declare_fields({{"arm_pos", {8, 2}},
                    {"arm_vel", {8}},
                    {"touch", {mj().nsensordata}},
                    {"hand_pos", {4}},
                    {"box_pos", {boxes, 4}},
                    {"box_vel", {3 * boxes}},
                    {"target_pos", {2}}});
  }

  int qpos(int joint) const { return mj().jnt_qposadr[joint]; }
  int dof(int joint) const { return mj().jnt_dofadr[joint]; }

  const int boxes, hand, target, target_geom, target_site, grasp_site;
  const Arm arm{mj()};
  std::vector<int> box_bodies, box_sites, box_joints;  // box joints as box<b>_x, _y, _z (the observation's order)

 private:
  static int boxes_of(const std::string& task) {
    if (task == "stack_2") return 2;
    if (task == "stack_4") return 4;
    throw std::invalid_argument("stacker has no task '" + task + "' (stack_2, stack_4)");
  }

  // make_model(n_boxes): removes box<n> ... box3.
  static SpecEdit keep_boxes(int boxes) {
    if (boxes == 4) return {};
    return [boxes](mjSpec& spec) {
      for (int b = boxes; b < 4; ++b) {
        const std::string name = "box" + std::to_string(b);
        mjsBody* body = mjs_findBody(&spec, name.c_str());
        if (body == nullptr) throw std::invalid_argument("stacker.xml has no body " + name);
        if (mjs_delete(&spec, body->element) != 0) throw std::runtime_error(mjs_getError(&spec));
      }
    };
  }
};

class Stacker : public DmcEnv {
 public:
  using Model = StackerModel;
  explicit Stacker(const Model& model) : DmcEnv(model), task_(model) {
    own_model({{&mjModel::body_pos, 3 * static_cast<size_t>(model.mj().nbody)}});
  }

 private:
  // Stack.initialize_episode; draws in its order.
  void initialize_episode(Rng& rng) override {
    double* qpos = data_->qpos;
    do {
      task_.arm.randomize(*model_, *data_, rng);
      const double target_height = 2 * static_cast<double>(rng.integer(task_.boxes)) + 1;
      const double box_size = model_->geom_size[3 * task_.target_geom];
      const double z = box_size * target_height;
      set_target(rng.uniform(-0.37, 0.37), z);
      for (int b = 0; b < task_.boxes; ++b) {
        const int* joints = task_.box_joints.data() + 3 * b;  // x, y, z
        qpos[task_.qpos(joints[0])] = rng.uniform(0.1, 0.3);
        qpos[task_.qpos(joints[2])] = rng.uniform(0.0, 0.7);
        qpos[task_.qpos(joints[1])] = rng.uniform(0.0, 2 * M_PI);
      }
      after_reset();
    } while (data_->ncon > 0);
  }

  void write_observation(double* obs) const override {
    obs = task_.arm.observe(*model_, *data_, obs);
    for (int i = 0; i < model_->nsensordata; ++i) *obs++ = std::log1p(data_->sensordata[i]);
    obs = body_2d_pose(*data_, task_.hand, obs);
    for (int body : task_.box_bodies) obs = body_2d_pose(*data_, body, obs);
    for (int joint : task_.box_joints) *obs++ = data_->qvel[task_.dof(joint)];
    *obs++ = data_->xpos[3 * task_.target];
    *obs++ = data_->xpos[3 * task_.target + 2];
  }

  double reward() const override {
    const double box_size = model_->geom_size[3 * task_.target_geom];
    const double* target = data_->site_xpos + 3 * task_.target_site;
    double nearest = INFINITY;
    for (int site : task_.box_sites)
      nearest = std::min(nearest, mujoco::distance3(data_->site_xpos + 3 * site, target));
    const double box_is_close = tolerance(nearest, {}, 2 * box_size);
    const double hand = mujoco::distance3(data_->site_xpos + 3 * task_.grasp_site, target);
    const double hand_is_far = tolerance(hand, {0.1, kInf}, 0.01);
    return box_is_close * hand_is_far;
  }

  // The target's x and z: body_pos[target].
  size_t task_parameter_count() const override { return 2; }
  void get_task_parameters(double* out) const override {
    out[0] = model_->body_pos[3 * task_.target];
    out[1] = model_->body_pos[3 * task_.target + 2];
  }
  void set_task_parameters(const double* in) override { set_target(in[0], in[1]); }

  void set_target(double x, double z) {
    edit_model([&](mjModel& m) { m.body_pos[3 * task_.target] = x, m.body_pos[3 * task_.target + 2] = z; });
  }

  const Model& task_;
};

}  // namespace torchpool::dmc
