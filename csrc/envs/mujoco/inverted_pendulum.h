// inverted_pendulum.h — InvertedPendulum-v5 (gymnasium/envs/mujoco/inverted_pendulum_v5.py)
// and InvertedPendulum-v4 (inverted_pendulum_v4.py).
//
// A pole on a cart; reward 1 per step while the pole stays within 0.2 rad of
// upright. Observation: qpos and qvel. Terminates when the angle leaves that
// range. v4 pays 1 on the terminating step too, and its info is empty.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class InvertedPendulumModel : public MujocoModel {
 public:
  explicit InvertedPendulumModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        reset_noise_scale(config.real("reset_noise_scale")),
        observation_size(nq() + nv()),
        info_extras(v4 ? std::vector<FieldSpec>{} : std::vector<FieldSpec>{info("reward_survive")}) {
    if (nq() < 2) throw std::invalid_argument("InvertedPendulum needs the cart and the hinge joints");
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double reset_noise_scale;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class InvertedPendulum : public MujocoEnv {
 public:
  using Model = InvertedPendulumModel;

  explicit InvertedPendulum(const Model& model) : MujocoEnv(model), model_(model) {}

  // InvertedPendulumEnv.reset_model: uniform noise on qpos and qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Uniform, out);
    write_zero_info(out);  // the step-only value (v4: none)
  }

  // InvertedPendulumEnv.step: terminated when |observation[1]| (the hinge
  // angle) > 0.2; the reference's "not finite" case is the unstable path here.
  // v5's reward is int(not terminated), v4's 1.0.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    if (!simulate(action, out)) return unstable_step();
    StepResult result;
    result.terminated = std::abs(sim_.data().qpos[1]) > 0.2;
    result.reward = result.terminated && !model_.v4 ? 0.0 : 1.0;
    if (!model_.v4) write_info(out, {result.reward});
    return result;
  }

 private:
  // InvertedPendulumEnv._get_obs.
  void write_observation() override { write_qpos_qvel(0); }

  const Model& model_;
};

}  // namespace torchpool::mujoco
