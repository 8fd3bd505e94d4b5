// humanoid.h — Humanoid-v5 (gymnasium/envs/mujoco/humanoid_v5.py) and
// Humanoid-v4 (humanoid_v4.py).
//
// A 3D humanoid rewarded for the x velocity of its centre of mass and for
// staying up. Observation: qpos (without x, y by default), qvel, then by
// default cinert[1:], cvel[1:], qfrc_actuator[6:] and cfrc_ext[1:].
// Terminates when the torso's z leaves healthy_z_range (bounds exclusive).
// HumanoidStandup-v5 shares the observation (humanoidstandup.h).
//
// v4 differs: its observation always has all of cinert, cvel, qfrc_actuator
// and cfrc_ext (the world body and the root joint's dofs included: 376
// values); its reward has no contact cost, and pays the healthy reward on the
// terminating step too (healthy_reward_of); its info has the centre of mass's
// position (not qpos), v4's names of the reward terms and no tendons; its
// reset has no info.
#pragma once

#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

// The observation switches of Humanoid-v5 and HumanoidStandup-v5, and
// Humanoid-v4's fixed layout.
struct HumanoidObservation {
  bool v4, exclude_current_positions, include_cinert, include_cvel, include_qfrc_actuator, include_cfrc_ext;

  // v4 has only exclude_current_positions_from_observation, and includes everything.
  explicit HumanoidObservation(const Config& config)
      : v4(mirrors_v4(config)),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        include_cinert(v4 || flag_kwarg(config, "include_cinert_in_observation")),
        include_cvel(v4 || flag_kwarg(config, "include_cvel_in_observation")),
        include_qfrc_actuator(v4 || flag_kwarg(config, "include_qfrc_actuator_in_observation")),
        include_cfrc_ext(v4 || flag_kwarg(config, "include_cfrc_ext_in_observation")) {}

  // Where cinert, cvel and cfrc_ext start (v5 leaves out the world body), and
  // qfrc_actuator (v5 leaves out the 6 dofs of the free root joint); v4 leaves out nothing.
  int first_body() const { return v4 ? 0 : 1; }
  int first_dof() const { return v4 ? 0 : 6; }

  // HumanoidEnv.__init__'s obs_size (v4 declares 376, or 378: the same for humanoid.xml).
  size_t size(const MujocoModel& model) const {
    const int bodies = model.nbody() - first_body();
    return model.nq() + model.nv() - 2 * exclude_current_positions + include_cinert * bodies * 10 +
           include_cvel * bodies * 6 + include_qfrc_actuator * (model.nv() - first_dof()) +
           include_cfrc_ext * bodies * 6;
  }

  // HumanoidEnv._get_obs.
  void write(const mjModel& model, const mjData& data, double* obs) const {
    const int body = first_body();
    obs = std::copy(data.qpos + (exclude_current_positions ? 2 : 0), data.qpos + model.nq, obs);
    obs = std::copy(data.qvel, data.qvel + model.nv, obs);
    if (include_cinert) obs = std::copy(data.cinert + 10 * body, data.cinert + 10 * model.nbody, obs);
    if (include_cvel) obs = std::copy(data.cvel + 6 * body, data.cvel + 6 * model.nbody, obs);
    if (include_qfrc_actuator) obs = std::copy(data.qfrc_actuator + first_dof(), data.qfrc_actuator + model.nv, obs);
    if (include_cfrc_ext) std::copy(data.cfrc_ext + 6 * body, data.cfrc_ext + 6 * model.nbody, obs);
  }
};

class HumanoidModel : public MujocoModel {
 public:
  explicit HumanoidModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        forward_reward_weight(config.real("forward_reward_weight")),
        ctrl_cost_weight(config.real("ctrl_cost_weight")),
        // v4 has no contact cost (nor its kwargs).
        contact_cost_weight(v4 ? 0.0 : config.real("contact_cost_weight")),
        contact_cost_range(v4 ? Range{0.0, 0.0} : range_kwarg(config, "contact_cost_range")),
        healthy_reward(config.real("healthy_reward")),
        terminate_when_unhealthy(flag_kwarg(config, "terminate_when_unhealthy")),
        healthy_z_range(range_kwarg(config, "healthy_z_range")),
        reset_noise_scale(config.real("reset_noise_scale")),
        observation(config),
        observation_size(observation.size(*this)),
        // mass_center's denominator, model.body_mass.sum().
        total_mass(numpy_sum(mj().body_mass, nbody(), [](double mass) { return mass; })),
        info_extras(v4 ? std::vector<FieldSpec>{info("reward_linvel"), info("reward_quadctrl"), info("reward_alive"),
                                                info("x_position"), info("y_position"), info("distance_from_origin"),
                                                info("x_velocity"), info("y_velocity"), info("forward_reward")}
                       : std::vector<FieldSpec>{info("x_position"),
                                                info("y_position"),
                                                info("distance_from_origin"),
                                                info("x_velocity"),
                                                info("y_velocity"),
                                                info("reward_survive"),
                                                info("reward_forward"),
                                                info("reward_ctrl"),
                                                info("reward_contact"),
                                                {"tendon_length", Dtype::Float64, {mj().ntendon}},
                                                {"tendon_velocity", Dtype::Float64, {mj().ntendon}}}) {}

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double forward_reward_weight, ctrl_cost_weight, contact_cost_weight;
  const Range contact_cost_range;
  const double healthy_reward;
  const bool terminate_when_unhealthy;
  const Range healthy_z_range;
  const double reset_noise_scale;
  const HumanoidObservation observation;
  const size_t observation_size;
  const double total_mass;
  const std::vector<FieldSpec> info_extras;
};

class Humanoid : public MujocoEnv {
 public:
  using Model = HumanoidModel;

  explicit Humanoid(const Model& model) : MujocoEnv(model), model_(model) {}

  // HumanoidEnv.reset_model: uniform noise on qpos and qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Uniform, out);
    if (model_.v4) {
      write_zero_info(out);  // no _get_reset_info in v4
      return;
    }
    const double* qpos = sim_.data().qpos;
    write_info(out, {qpos[0], qpos[1], norm2(qpos), 0, 0, 0, 0, 0, 0});  // _get_reset_info
    write_tendons(out);
  }

  // HumanoidEnv.step.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    double velocity[2];  // of the mass centre
    if (!step_forward(action, out, velocity)) return unstable_step();
    const double x_velocity = velocity[0], y_velocity = velocity[1];
    const mjData& data = sim_.data();

    // HumanoidEnv._get_rew (v4: the same terms, in step). The control cost squares data.ctrl (= the action).
    const double z = data.qpos[2];
    const bool healthy = model_.healthy_z_range.low < z && z < model_.healthy_z_range.high;
    const double forward_reward = model_.forward_reward_weight * x_velocity;
    const double healthy_reward =
        healthy_reward_of(model_.v4, healthy, model_.terminate_when_unhealthy, model_.healthy_reward);
    const double rewards = forward_reward + healthy_reward;
    const double ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(data.ctrl, model_.nu());
    StepResult result;
    result.terminated = !healthy && model_.terminate_when_unhealthy;
    if (model_.v4) {
      // humanoid_v4.py: reward = rewards - ctrl_cost; x_position, y_position: the mass centre after the step.
      result.reward = rewards - ctrl_cost;
      double xy[2];
      forward_position(xy);
      write_info(out, {forward_reward, -ctrl_cost, healthy_reward, xy[0], xy[1], norm2(xy), x_velocity, y_velocity,
                       forward_reward});
      return result;
    }
    const double contact_cost = clip(model_.contact_cost_weight * sum_of_squares(data.cfrc_ext, 6 * model_.nbody()),
                                     model_.contact_cost_range.low, model_.contact_cost_range.high);
    const double costs = ctrl_cost + contact_cost;
    result.reward = rewards - costs;
    const double* qpos = data.qpos;
    write_info(out, {qpos[0], qpos[1], norm2(qpos), x_velocity, y_velocity, healthy_reward, forward_reward, -ctrl_cost,
                     -contact_cost});
    write_tendons(out);
    return result;
  }

 private:
  // HumanoidEnv._get_obs (HumanoidObservation::write).
  void write_observation() override { model_.observation.write(sim_.model(), sim_.data(), next_observation()); }

  // humanoid_v5.py's (and humanoid_v4.py's) mass_center: einsum("b,bj->j",
  // body_mass, xipos) (a plain loop over bodies, as einsum sums) over
  // body_mass.sum(); x and y.
  void forward_position(double* xy) const override {
    const mjModel& model = sim_.model();
    const mjData& data = sim_.data();
    for (int axis = 0; axis < 2; ++axis) {
      double weighted = -0.0;
      for (int body = 0; body < model.nbody; ++body) weighted += model.body_mass[body] * data.xipos[3 * body + axis];
      xy[axis] = weighted / model_.total_mass;
    }
  }

  const Model& model_;
};

}  // namespace torchpool::mujoco
