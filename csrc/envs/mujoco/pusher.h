// pusher.h — Pusher-v5 (gymnasium/envs/mujoco/pusher_v5.py) and Pusher-v4 (pusher_v4.py).
//
// A seven-joint arm rewarded for pushing a cylinder (qpos[-4:-2], placed at
// random at reset) to the goal at the origin (qpos[-2:]). Observation: the
// arm's qpos and qvel (7 each), then the positions of the arm's tip, the
// object and the goal. Never terminates; the time limit (100 steps) truncates.
// v4 takes its reward from the state before the step, and its info has the
// distance and control terms unweighted and no reward_near.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class PusherModel : public MujocoModel {
 public:
  static constexpr int kArmJoints = 7;

  explicit PusherModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        reward_near_weight(config.real("reward_near_weight")),
        reward_dist_weight(config.real("reward_dist_weight")),
        reward_control_weight(config.real("reward_control_weight")),
        tips_arm(body_id("tips_arm")),
        object(body_id("object")),
        goal(body_id("goal")),
        observation_size(2 * kArmJoints + 9),
        info_extras(v4 ? std::vector<FieldSpec>{info("reward_dist"), info("reward_ctrl")}
                       : std::vector<FieldSpec>{info("reward_dist"), info("reward_ctrl"), info("reward_near")}) {
    if (nq() < kArmJoints + 4 || nv() < kArmJoints + 4)
      throw std::invalid_argument("Pusher needs 7 arm joints and 4 object/goal joints");
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 100, info_extras); }

  const bool v4;
  const double reward_near_weight, reward_dist_weight, reward_control_weight;
  const int tips_arm, object, goal;  // body ids
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class Pusher : public MujocoEnv {
 public:
  using Model = PusherModel;

  explicit Pusher(const Model& model) : MujocoEnv(model), model_(model) {}

  // PusherEnv.reset_model: the arm at init_qpos exactly; the cylinder at
  // x ~ U(-0.3, 0), y ~ U(-0.2, 0.2), redrawn until farther than 0.17 from
  // the goal (0, 0); small uniform noise on the arm's qvel, none on the
  // object's and goal's. (The reference writes into init_qpos itself, but
  // only entries it overwrites at every reset.)
  void reset(Rng& rng, StepOutput& out) {
    const int nq = model_.nq(), nv = model_.nv();
    const double goal[2] = {0.0, 0.0};
    double cylinder[2], offset[2];
    do {
      cylinder[0] = uniform(rng, -0.3, 0.0);
      cylinder[1] = uniform(rng, -0.2, 0.2);
      offset[0] = cylinder[0] - goal[0], offset[1] = cylinder[1] - goal[1];
    } while (!(norm2(offset) > 0.17));
    std::copy(model_.init_qpos.begin(), model_.init_qpos.end(), qpos_.begin());
    qpos_[nq - 4] = cylinder[0], qpos_[nq - 3] = cylinder[1];
    qpos_[nq - 2] = goal[0], qpos_[nq - 1] = goal[1];
    for (int i = 0; i < nv; ++i) qvel_[i] = model_.init_qvel[i] + uniform(rng, -0.005, 0.005);
    for (int i = nv - 4; i < nv; ++i) qvel_[i] = 0.0;
    begin_episode(out);
    write_zero_info(out);  // the step-only values
  }

  // PusherEnv.step and _get_rew: the object's distances to the arm's tip and to the goal after the step
  // (v5) or before it (v4, forward_position). v4's reward_dist + 0.1 * reward_ctrl + 0.5 * reward_near of
  // unweighted terms is v5's sum of weighted ones with v4's weights (-(a * w) == -a * w exactly).
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    double distances[kPositionSize];
    if (model_.v4) {
      if (!simulate_reading_before(action, out, distances)) return unstable_step();
    } else {
      if (!simulate(action, out)) return unstable_step();
      forward_position(distances);
    }
    const double near = -distances[0], dist = -distances[1];
    const double ctrl = -sum_of_squares(action.values, action.size);
    const double reward_near = near * model_.reward_near_weight, reward_dist = dist * model_.reward_dist_weight,
                 reward_ctrl = ctrl * model_.reward_control_weight;
    StepResult result;
    result.reward = reward_dist + reward_ctrl + reward_near;
    if (model_.v4)
      write_info(out, {dist, ctrl});
    else
      write_info(out, {reward_dist, reward_ctrl, reward_near});
    return result;
  }

 private:
  // The object's distance to the arm's tip, then to the goal.
  void forward_position(double* p) const override {
    const double* xpos = sim_.data().xpos;
    const double* object = xpos + 3 * model_.object;
    p[0] = distance3(object, xpos + 3 * model_.tips_arm), p[1] = distance3(object, xpos + 3 * model_.goal);
  }

  // PusherEnv._get_obs.
  void write_observation() override {
    const mjData& data = sim_.data();
    double* obs = next_observation();
    obs = std::copy(data.qpos, data.qpos + PusherModel::kArmJoints, obs);
    obs = std::copy(data.qvel, data.qvel + PusherModel::kArmJoints, obs);
    for (int body : {model_.tips_arm, model_.object, model_.goal})
      obs = std::copy(data.xpos + 3 * body, data.xpos + 3 * body + 3, obs);
  }

  const Model& model_;
};

}  // namespace torchpool::mujoco
