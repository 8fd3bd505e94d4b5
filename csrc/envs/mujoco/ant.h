// ant.h — Ant-v5 (gymnasium/envs/mujoco/ant_v5.py) and Ant-v4 (ant_v4.py).
//
// A four-legged body on a plane, rewarded for moving its main body along +x.
// Observation: qpos (without x, y by default), qvel, and the clipped external
// contact forces of every body but the world (cfrc_ext[1:]), float64 in the
// reference. Terminates when unhealthy (not finite, or z out of range).
//
// v4 differs: its torso is the main body; contact forces are off by default
// (use_contact_forces), and when on they are observed for every body, the
// world's included, and only then charged in the reward; the healthy reward
// is paid on the terminating step too (healthy_reward_of); its info has the
// torso's position, a duplicate `forward_reward`, no `reward_contact`, and
// with use_contact_forces `reward_ctrl` holds the negated contact cost (a
// slip of ant_v4.py's, kept); its reset has no info.
#pragma once

#include <string>
#include <vector>

#include "mujoco_env.h"

namespace torchpool::mujoco {

class AntModel : public MujocoModel {
 public:
  explicit AntModel(const Config& config)
      : MujocoModel(config),
        v4(mirrors_v4(config)),
        forward_reward_weight(config.real("forward_reward_weight")),
        ctrl_cost_weight(config.real("ctrl_cost_weight")),
        contact_cost_weight(config.real("contact_cost_weight")),
        healthy_reward(config.real("healthy_reward")),
        // main_body: a body index or name; data.body(main_body) accepts both.
        main_body(config.has_string("main_body") ? body_id(config.string("main_body"))
                                                 : static_cast<int>(config.integer("main_body"))),
        terminate_when_unhealthy(flag_kwarg(config, "terminate_when_unhealthy")),
        healthy_z_range(range_kwarg(config, "healthy_z_range")),
        contact_force_range(range_kwarg(config, "contact_force_range")),
        reset_noise_scale(config.real("reset_noise_scale")),
        exclude_current_positions(flag_kwarg(config, "exclude_current_positions_from_observation")),
        include_cfrc_ext(flag_kwarg(config, v4 ? "use_contact_forces" : "include_cfrc_ext_in_observation")),
        first_observed_body(v4 ? 0 : 1),
        contact_cost_charged(!v4 || include_cfrc_ext),
        // AntEnv.__init__'s obs_size (v4 declares 27, + 2, + 84: the same for ant.xml).
        observation_size(nq() + nv() - 2 * exclude_current_positions +
                         include_cfrc_ext * (nbody() - first_observed_body) * 6),
        info_extras(v4 ? std::vector<FieldSpec>{info("reward_forward"), info("reward_ctrl"), info("reward_survive"),
                                                info("x_position"), info("y_position"), info("distance_from_origin"),
                                                info("x_velocity"), info("y_velocity"), info("forward_reward")}
                       : std::vector<FieldSpec>{info("x_position"), info("y_position"), info("distance_from_origin"),
                                                info("x_velocity"), info("y_velocity"), info("reward_forward"),
                                                info("reward_ctrl"), info("reward_contact"), info("reward_survive")}) {
    if (main_body < 0 || main_body >= nbody())
      throw std::invalid_argument("main_body " + std::to_string(main_body) + " is not a body index of the model");
  }

  EnvSpec spec(Dtype obs_dtype) const { return base_spec(obs_dtype, observation_size, 1000, info_extras); }

  const bool v4;
  const double forward_reward_weight, ctrl_cost_weight, contact_cost_weight, healthy_reward;
  const int main_body;
  const bool terminate_when_unhealthy;
  const Range healthy_z_range, contact_force_range;
  const double reset_noise_scale;
  const bool exclude_current_positions;
  const bool include_cfrc_ext;      // v5's include_cfrc_ext_in_observation, v4's use_contact_forces
  const int first_observed_body;    // of cfrc_ext: v5 leaves out the world (body 0), v4 does not
  const bool contact_cost_charged;  // v5 always; v4 with use_contact_forces
  const size_t observation_size;
  const std::vector<FieldSpec> info_extras;
};

class Ant : public MujocoEnv {
 public:
  using Model = AntModel;

  explicit Ant(const Model& model) : MujocoEnv(model), model_(model) {}

  // AntEnv.reset_model: uniform noise on qpos, Gaussian noise on qvel.
  void reset(Rng& rng, StepOutput& out) {
    reset_with_noise(rng, model_.reset_noise_scale, Noise::Normal, out);
    // v5's AntEnv._get_reset_info (v4 has none); the step-only values are 0.
    const double* qpos = sim_.data().qpos;
    if (model_.v4)
      write_zero_info(out);
    else
      write_info(out, {qpos[0], qpos[1], norm2(qpos), 0, 0, 0, 0, 0, 0});
  }

  // AntEnv.step.
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    const mjData& data = sim_.data();
    double velocity[2];
    if (!step_forward(action, out, velocity)) return unstable_step();
    const double x_velocity = velocity[0], y_velocity = velocity[1];

    // AntEnv._get_rew (v5); v4 computes the same terms in step.
    const bool healthy = is_healthy();
    const double forward_reward = x_velocity * model_.forward_reward_weight;
    const double healthy_reward =
        healthy_reward_of(model_.v4, healthy, model_.terminate_when_unhealthy, model_.healthy_reward);
    const double rewards = forward_reward + healthy_reward;
    const double ctrl_cost = model_.ctrl_cost_weight * sum_of_squares(action.values, action.size);
    const double contact_cost =
        model_.contact_cost_charged ? model_.contact_cost_weight * contact_force_squares() : 0.0;
    const double costs = model_.contact_cost_charged ? ctrl_cost + contact_cost : ctrl_cost;

    StepResult result;
    result.reward = rewards - costs;
    result.terminated = !healthy && model_.terminate_when_unhealthy;
    if (model_.v4) {
      // ant_v4.py's info: the torso's x, y (get_body_com), and reward_ctrl overwritten by -contact_cost
      // when the contact cost is charged.
      const double* xy = data.xpos + 3 * model_.main_body;
      write_info(out, {forward_reward, model_.contact_cost_charged ? -contact_cost : -ctrl_cost, healthy_reward, xy[0],
                       xy[1], norm2(xy), x_velocity, y_velocity, forward_reward});
    } else {
      const double* qpos = data.qpos;
      write_info(out, {qpos[0], qpos[1], norm2(qpos), x_velocity, y_velocity, forward_reward, -ctrl_cost, -contact_cost,
                       healthy_reward});
    }
    return result;
  }

 private:
  // AntEnv.step's xy_position: main_body's xpos x, y (v4: the torso's, get_body_com("torso")).
  void forward_position(double* xy) const override { std::copy_n(sim_.data().xpos + 3 * model_.main_body, 2, xy); }

  // AntEnv.is_healthy: the state is finite and min_z <= z <= max_z (inclusive, unlike the other tasks).
  bool is_healthy() const {
    const mjData& data = sim_.data();
    for (int i = 0; i < model_.nq(); ++i)
      if (!std::isfinite(data.qpos[i])) return false;
    for (int i = 0; i < model_.nv(); ++i)
      if (!std::isfinite(data.qvel[i])) return false;
    const double z = data.qpos[2];
    return model_.healthy_z_range.low <= z && z <= model_.healthy_z_range.high;
  }

  // AntEnv.contact_forces: cfrc_ext clipped to contact_force_range, every body.
  double clipped_contact_force(size_t i) const {
    return clip(sim_.data().cfrc_ext[i], model_.contact_force_range.low, model_.contact_force_range.high);
  }

  // AntEnv.contact_cost's np.sum(np.square(contact_forces)), over all nbody x 6 values.
  double contact_force_squares() const {
    const size_t count = static_cast<size_t>(model_.nbody()) * 6;
    const Range range = model_.contact_force_range;
    return numpy_sum(sim_.data().cfrc_ext, count, [range](double force) {
      const double clipped = clip(force, range.low, range.high);
      return clipped * clipped;
    });
  }

  // AntEnv._get_obs: contact forces from first_observed_body on (v5: contact_forces[1:], v4: all of them).
  void write_observation() override {
    double* obs = write_qpos_qvel(model_.exclude_current_positions ? 2 : 0);
    if (!model_.include_cfrc_ext) return;
    const size_t begin = static_cast<size_t>(model_.first_observed_body) * 6;
    for (size_t i = begin; i < static_cast<size_t>(model_.nbody()) * 6; ++i) *obs++ = clipped_contact_force(i);
  }

  const Model& model_;
};

}  // namespace torchpool::mujoco
