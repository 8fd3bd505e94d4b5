// humanoid.h — the Control Suite's humanoid stand / walk / run / run_pure_state
// (dm_control/suite/humanoid.py), and humanoid_CMU stand / walk / run
// (dm_control/suite/humanoid_CMU.py: the CMU mocap body, 56 joints; its
// torso is the thorax, upright is its zy, no pure-state task).
//
// A 21-joint 3D humanoid. Reward: head above 1.4 m x torso upright x the
// small-control term x (stand: not moving horizontally; walk, run: centre-of-
// mass speed towards 1 or 10 m/s). Each episode starts from random joint
// angles, redrawn until nothing touches. Observation: joint_angles,
// head_height, extremities (hands and feet in the torso's frame),
// torso_vertical, com_velocity, velocity; run_pure_state: position, velocity.
#pragma once

#include "dmc_env.h"

namespace torchpool::dmc {

class HumanoidModel : public DmcModel {
 public:
  explicit HumanoidModel(const Config& config)
      : DmcModel(config),
        cmu(mj_name2id(&mj(), mjOBJ_BODY, "thorax") >= 0),
        move_speed(task_speed(config.string("task_name"), cmu)),
        pure_state(config.string("task_name") == "run_pure_state"),
        torso(object_id(mj(), mjOBJ_BODY, cmu ? "thorax" : "torso")),
        head(object_id(mj(), mjOBJ_BODY, "head")),
        limbs{object_id(mj(), mjOBJ_BODY, cmu ? "lhand" : "left_hand"),
              object_id(mj(), mjOBJ_BODY, cmu ? "lfoot" : "left_foot"),
              object_id(mj(), mjOBJ_BODY, cmu ? "rhand" : "right_hand"),
              object_id(mj(), mjOBJ_BODY, cmu ? "rfoot" : "right_foot")},
        upright_axis(cmu ? kZY : kZZ),
        com_velocity_sensor(sensor_adr(mj(), cmu ? "thorax_subtreelinvel" : "torso_subtreelinvel")) {
    if (pure_state)
      declare_fields({{"position", {nq()}}, {"velocity", {nv()}}});
    else
      declare_fields({{"joint_angles", {nq() - 7}},
                      {"head_height", {}},
                      {"extremities", {12}},
                      {"torso_vertical", {3}},
                      {"com_velocity", {3}},
                      {"velocity", {nv()}}});
  }

  const bool cmu;           // humanoid_CMU's model
  const double move_speed;  // _WALK_SPEED, _RUN_SPEED; 0 for stand
  const bool pure_state;
  const int torso, head;
  const int limbs[4];  // left hand, left foot, right hand, right foot: Physics.extremities' order
  const Axis upright_axis;
  const int com_velocity_sensor;

 private:
  static double task_speed(const std::string& task, bool cmu) {
    if (task == "stand") return 0.0;
    if (task == "walk") return 1.0;
    if (task == "run" || (task == "run_pure_state" && !cmu)) return 10.0;
    throw std::invalid_argument(cmu ? "humanoid_CMU has no task '" + task + "' (stand, walk, run)"
                                    : "humanoid has no task '" + task + "' (stand, walk, run, run_pure_state)");
  }
};

class Humanoid : public DmcEnv {
 public:
  using Model = HumanoidModel;
  explicit Humanoid(const Model& model) : DmcEnv(model), task_(model) {}

 private:
  // Humanoid.initialize_episode: random joints until the body penetrates nothing (no bound on tries).
  void initialize_episode(Rng& rng) override {
    do {
      randomize_limited_and_rotational_joints(rng);
      after_reset();
    } while (data_->ncon > 0);
  }

  void write_observation(double* obs) const override {
    if (task_.pure_state) {
      obs = std::copy_n(data_->qpos, model_->nq, obs);
      std::copy_n(data_->qvel, model_->nv, obs);
      return;
    }
    obs = std::copy_n(data_->qpos + 7, model_->nq - 7, obs);
    *obs++ = head_height();
    // Physics.extremities: each limb relative to the torso, in the torso's frame.
    for (int limb : task_.limbs) {
      in_frame(data_->xpos + 3 * limb, data_->xpos + 3 * task_.torso, data_->xmat + 9 * task_.torso, obs);
      obs += 3;
    }
    *obs++ = xmat(task_.torso, kZX);
    *obs++ = xmat(task_.torso, kZY);
    *obs++ = xmat(task_.torso, kZZ);
    obs = std::copy_n(data_->sensordata + task_.com_velocity_sensor, 3, obs);
    std::copy_n(data_->qvel, model_->nv, obs);
  }

  double reward() const override {
    const double standing = tolerance(head_height(), {1.4, kInf}, 1.4 / 4);
    const double upright = tolerance(xmat(task_.torso, task_.upright_axis), {0.9, kInf}, 1.9, Sigmoid::Linear, 0.0);
    const double stand_reward = standing * upright;
    const double small_control = (4 + mean_small_control()) / 5;
    const double* com_velocity = data_->sensordata + task_.com_velocity_sensor;
    if (task_.move_speed == 0.0) {
      const double dont_move = (tolerance(com_velocity[0], {}, 2.0) + tolerance(com_velocity[1], {}, 2.0)) / 2;
      return small_control * stand_reward * dont_move;
    }
    const double speed = std::sqrt(com_velocity[0] * com_velocity[0] + com_velocity[1] * com_velocity[1]);
    const double move = tolerance(speed, {task_.move_speed, kInf}, task_.move_speed, Sigmoid::Linear, 0.0);
    return small_control * stand_reward * ((5 * move + 1) / 6);
  }

  double head_height() const { return data_->xpos[3 * task_.head + 2]; }

  const Model& task_;
};

}  // namespace torchpool::dmc
