// humanoidstandup.h — HumanoidStandup-v5 (gymnasium/envs/mujoco/humanoidstandup_v5.py)
// and HumanoidStandup-v4 (humanoidstandup_v4.py).
//
// The humanoid starts lying down and is rewarded for the height of its torso.
// Observation as Humanoid-v5's (humanoid.h). Never terminates.
// v4 steps alike; its observation is Humanoid-v4's (376 values), its info
// only the reward terms, and its reset has no info.
#pragma once

#include <vector>

#include "humanoid.h"
#include "mujoco_env.h"

namespace torchpool::mujoco {

class HumanoidStandupModel : public MujocoModel {
 public:
  explicit HumanoidStandupModel(const Config& config)
      : MujocoModel(config),
        ctrl_cost_weight(config.real("ctrl_cost_weight")),
        impact_cost_weight(config.real("impact_cost_weight")),
        impact_cost_range(range_kwarg(config, "impact_cost_range")),
        reset_noise_scale(config.real("reset_noise_scale")),
        observation(config),
        observation_size(observation.size(*this)),
        info_extras(observation.v4
                        ? std::vector<FieldSpec>{info("reward_linup"), info("reward_quadctrl"), info("reward_impact")}
                        : std::vector<FieldSpec>{info("x_position"),
                                                 info("y_position"),
                                                 info("z_distance_from_origin"),
                                                 info("reward_linup"),
                                                 info("reward_quadctrl"),
                                                 info("reward_impact"),
                                                 {"tendon_length", Dtype::Float64, {mj().ntendon}},
                                                 {"tendon_velocity", Dtype::Float64, {mj().ntendon}}}) {
    config.ignore("uph_cost_weight");  // taken and, as in the reference's _get_rew, not used
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const double ctrl_cost_weight, impact_cost_weight;
  const Range impact_cost_range;
  const double reset_noise_scale;
  const HumanoidObservation observation;
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class HumanoidStandup : public MujocoEnv {
 public:
  using Model = HumanoidStandupModel;

  explicit HumanoidStandup(const Model& model) : MujocoEnv(model), model_(model) {}

  // HumanoidStandupEnv.reset_model: uniform noise on qpos and qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Uniform, out);
    if (model_.observation.v4) {
      write_zero_info(out);  // no _get_reset_info in v4
      return;
    }
    const double* qpos = sim_.data().qpos;
    write_info(out, {qpos[0], qpos[1], qpos[2] - model_.init_qpos[2], 0, 0, 0});  // _get_reset_info
    write_tendons(out);
  }

  // HumanoidStandupEnv.step and _get_rew.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    if (!simulate(action, out)) return unstable_step();
    const mjData& data = sim_.data();

    const double* qpos = data.qpos;
    // (pos_after - 0) / model.opt.timestep: the timestep, not dt, as in the reference.
    const double uph_cost = (qpos[2] - 0) / sim_.model().opt.timestep;
    const double quad_ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(data.ctrl, model_.nu());
    const double quad_impact_cost = clip(model_.impact_cost_weight * sum_of_squares(data.cfrc_ext, 6 * model_.nbody()),
                                         model_.impact_cost_range.low, model_.impact_cost_range.high);
    StepResult result;
    result.reward = uph_cost - quad_ctrl_cost - quad_impact_cost + 1;
    if (model_.observation.v4) {
      write_info(out, {uph_cost, -quad_ctrl_cost, -quad_impact_cost});
      return result;
    }
    write_info(out, {qpos[0], qpos[1], qpos[2] - model_.init_qpos[2], uph_cost, -quad_ctrl_cost, -quad_impact_cost});
    write_tendons(out);
    return result;
  }

 private:
  // HumanoidEnv._get_obs (HumanoidObservation::write).
  void write_observation() override { model_.observation.write(sim_.model(), sim_.data(), next_observation()); }

  const Model& model_;
};

}  // namespace torchpool::mujoco
