// reacher.h — Reacher-v5 (gymnasium/envs/mujoco/reacher_v5.py) and Reacher-v4 (reacher_v4.py).
//
// A two-joint arm rewarded for bringing its fingertip to a random target
// (the last two qpos, set at reset). Observation: cos and sin of the two arm
// angles, qpos[2:] (the target), the arm's qvel and the fingertip-to-target
// vector's x, y. Never terminates; the time limit (50 steps) truncates.
// v4 takes its reward from the state before the step, and observes the
// vector's z too.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class ReacherModel : public MujocoModel {
 public:
  explicit ReacherModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        reward_dist_weight(config.real("reward_dist_weight")),
        reward_control_weight(config.real("reward_control_weight")),
        fingertip(body_id("fingertip")),
        target(body_id("target")),
        observation_size(nq() + 6 + v4),
        info_extras({info("reward_dist"), info("reward_ctrl")}) {
    if (nq() < 4 || nv() < 2) throw std::invalid_argument("Reacher needs two arm joints and two target joints");
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 50, info_extras); }

  const bool v4;
  const double reward_dist_weight, reward_control_weight;
  const int fingertip, target;  // body ids
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class Reacher : public MujocoEnv {
 public:
  using Model = ReacherModel;

  explicit Reacher(const Model& model) : MujocoEnv(model), model_(model) {}

  // ReacherEnv.reset_model: uniform arm noise; a goal uniform in the disc of
  // radius 0.2 (rejection sampling from the square, as the reference does)
  // in the last two qpos, with zero velocity.
  void reset(Rng& rng, StepOutput& out) {
    const int nq = model_.nq(), nv = model_.nv();
    for (int i = 0; i < nq; ++i) qpos_[i] = uniform(rng, -0.1, 0.1) + model_.init_qpos[i];
    double goal[2];
    do {
      goal[0] = uniform(rng, -0.2, 0.2);
      goal[1] = uniform(rng, -0.2, 0.2);
    } while (!(norm2(goal) < 0.2));
    qpos_[nq - 2] = goal[0], qpos_[nq - 1] = goal[1];
    for (int i = 0; i < nv; ++i) qvel_[i] = model_.init_qvel[i] + uniform(rng, -0.005, 0.005);
    qvel_[nv - 2] = qvel_[nv - 1] = 0.0;
    begin_episode(out);
    write_zero_info(out);  // the step-only values
  }

  // ReacherEnv.step and _get_rew: the fingertip's distance to the target after the step (v5) or before it
  // (v4, forward_position).
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    double distance_before[kPositionSize];
    if (!(model_.v4 ? simulate_reading_before(action, out, distance_before) : simulate(action, out)))
      return unstable_step();

    const double distance = model_.v4 ? distance_before[0] : fingertip_distance();
    const double reward_dist = -distance * model_.reward_dist_weight;
    const double reward_ctrl = -sum_of_squares(action.values, action.size) * model_.reward_control_weight;
    StepResult result;
    result.reward = reward_dist + reward_ctrl;
    write_info(out, {reward_dist, reward_ctrl});
    return result;
  }

 private:
  double fingertip_distance() const {
    const double* xpos = sim_.data().xpos;
    return distance3(xpos + 3 * model_.fingertip, xpos + 3 * model_.target);
  }

  void forward_position(double* p) const override { p[0] = fingertip_distance(), p[1] = 0.0; }

  // ReacherEnv._get_obs.
  void write_observation() override {
    const mjData& data = sim_.data();
    double* obs = next_observation();
    *obs++ = std::cos(data.qpos[0]), *obs++ = std::cos(data.qpos[1]);
    *obs++ = std::sin(data.qpos[0]), *obs++ = std::sin(data.qpos[1]);
    obs = std::copy(data.qpos + 2, data.qpos + model_.nq(), obs);
    *obs++ = data.qvel[0], *obs++ = data.qvel[1];
    const double* fingertip = data.xpos + 3 * model_.fingertip;
    const double* target = data.xpos + 3 * model_.target;
    *obs++ = fingertip[0] - target[0], *obs++ = fingertip[1] - target[1];
    if (model_.v4) *obs = fingertip[2] - target[2];
  }

  const Model& model_;
};

}  // namespace torchpool::mujoco
