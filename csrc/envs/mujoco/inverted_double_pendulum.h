// inverted_double_pendulum.h — InvertedDoublePendulum-v5
// (gymnasium/envs/mujoco/inverted_double_pendulum_v5.py).
//
// Two poles on a cart; rewarded for keeping the tip (site 0) high and still.
// Observation: the cart's x, sin and cos of the hinge angles, qvel clipped to
// [-10, 10] and the cart's constraint force clipped to [-10, 10]. Terminates
// when the tip's height y <= 1.
//
// v4 observes every dof's constraint force (v5 only the cart's), pays the
// healthy reward on the terminating step too, and its info is empty.
#pragma once

#include <vector>

#include "../classic/python_numerics.h"
#include "mujoco_env.h"

namespace torchpool::mujoco {

class InvertedDoublePendulumModel : public MujocoModel {
 public:
  explicit InvertedDoublePendulumModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        healthy_reward(config.real("healthy_reward")),
        reset_noise_scale(config.real("reset_noise_scale")),
        constraint_forces(v4 ? nv() : 1),
        observation_size(1 + 2 * (nq() - 1) + nv() + constraint_forces),
        info_extras(
            v4 ? std::vector<FieldSpec>{}
               : std::vector<FieldSpec>{info("reward_survive"), info("distance_penalty"), info("velocity_penalty")}) {
    if (mj().nsite < 1 || nv() < 3) throw std::invalid_argument("InvertedDoublePendulum needs a tip site and 3 dofs");
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double healthy_reward, reset_noise_scale;
  const int constraint_forces;  // the leading qfrc_constraint values observed
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class InvertedDoublePendulum : public MujocoEnv {
 public:
  using Model = InvertedDoublePendulumModel;

  explicit InvertedDoublePendulum(const Model& model) : MujocoEnv(model), model_(model) {}

  // InvertedDoublePendulumEnv.reset_model: uniform noise on qpos, Gaussian on qvel.
  void reset(Rng& rng, StepOutput& out) {
    // (standard_normal * scale there; IEEE multiplication commutes, so the same bits.)
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Normal, out);
    write_zero_info(out);  // the step-only values (v4: none)
  }

  // InvertedDoublePendulumEnv.step and _get_rew. The squares are x**2 of
  // NumPy float64 scalars, i.e. pow(x, 2).
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    if (!simulate(action, out)) return unstable_step();

    const mjData& data = sim_.data();
    const double x = data.site_xpos[0], y = data.site_xpos[2];
    const double v1 = data.qvel[1], v2 = data.qvel[2];
    StepResult result;
    result.terminated = y <= 1;
    // The reference's x**2 (classic::python_square: libm pow, as NumPy calls it).
    const double dist_penalty = 0.01 * classic::python_square(x) + classic::python_square(y - 2);
    const double vel_penalty = 1e-3 * classic::python_square(v1) + 5e-3 * classic::python_square(v2);
    const double alive_bonus = model_.healthy_reward * (result.terminated && !model_.v4 ? 0 : 1);
    result.reward = alive_bonus - dist_penalty - vel_penalty;
    if (!model_.v4) write_info(out, {alive_bonus, -dist_penalty, -vel_penalty});
    return result;
  }

 private:
  // InvertedDoublePendulumEnv._get_obs.
  void write_observation() override {
    const mjData& data = sim_.data();
    const int nq = model_.nq();
    double* obs = next_observation();
    *obs++ = data.qpos[0];
    for (int i = 1; i < nq; ++i) *obs++ = std::sin(data.qpos[i]);
    for (int i = 1; i < nq; ++i) *obs++ = std::cos(data.qpos[i]);
    for (int i = 0; i < model_.nv(); ++i) *obs++ = clip(data.qvel[i], -10.0, 10.0);
    for (int i = 0; i < model_.constraint_forces; ++i) *obs++ = clip(data.qfrc_constraint[i], -10.0, 10.0);
  }

  const Model& model_;
};

}  // namespace torchpool::mujoco
