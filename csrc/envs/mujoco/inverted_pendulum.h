// inverted_pendulum.h — InvertedPendulum-v5 (gymnasium/envs/mujoco/inverted_pendulum_v5.py).
//
// A pole on a cart; reward 1 per step while the pole stays within 0.2 rad of
// upright. Observation: qpos and qvel. Terminates when the angle leaves that
// range.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class InvertedPendulumModel : public MujocoModel {
 public:
  explicit InvertedPendulumModel(const Config& config)
      : MujocoModel(config),
        reset_noise_scale(config.number("reset_noise_scale")),
        observation_size(nq() + nv()),
        info_extras({info("reward_survive")}) {
    if (nq() < 2) throw std::invalid_argument("InvertedPendulum needs the cart and the hinge joints");
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const double reset_noise_scale;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class InvertedPendulum : public MujocoEnv {
 public:
  using Model = InvertedPendulumModel;

  explicit InvertedPendulum(const Model& model)
      : MujocoEnv(model, model.observation_size, model.info_extras), model_(model),
        qpos_(model.nq()), qvel_(model.nv()) {}

  // InvertedPendulumEnv.reset_model: uniform noise on qpos and qvel.
  void reset(Rng& rng, StepOutput& out) {
    const double scale = model_.reset_noise_scale;
    for (int i = 0; i < model_.nq(); ++i) qpos_[i] = model_.init_qpos[i] + uniform(rng, -scale, scale);
    for (int i = 0; i < model_.nv(); ++i) qvel_[i] = model_.init_qvel[i] + uniform(rng, -scale, scale);
    sim_.reset(qpos_.data(), qvel_.data());
    write_observation();
    publish(out);
    write_info(out, {0});
  }

  // InvertedPendulumEnv.step: terminated when |observation[1]| (the hinge
  // angle) > 0.2; the reference's "not finite" case is the unstable path here.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    sim_.do_simulation(action.values, model_.frame_skip);
    write_observation();
    if (!publish(out)) return unstable_step();
    StepResult result;
    result.terminated = std::abs(sim_.data().qpos[1]) > 0.2;
    result.reward = result.terminated ? 0.0 : 1.0;
    write_info(out, {result.reward});
    return result;
  }

 private:
  // InvertedPendulumEnv._get_obs.
  void write_observation() {
    const mjData& data = sim_.data();
    double* obs = std::copy(data.qpos, data.qpos + model_.nq(), next_observation());
    std::copy(data.qvel, data.qvel + model_.nv(), obs);
  }

  const Model& model_;
  std::vector<double> qpos_, qvel_;  // reset scratch
};

}  // namespace torchpool::mujoco
