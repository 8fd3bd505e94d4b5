// pendulum.h — Pendulum-v1, Gymnasium 1.x (gymnasium/envs/classic_control/pendulum.py), and
// Pendulum-v0, gym 0.20 and older (gym/envs/classic_control/pendulum.py there; EnvPool's Pendulum-v0).
//
// v0 integrates the angle with the velocity before clipping it, and writes
// the gravity term as -3 * g / (2 * l) * sin(th + pi). The registry's id
// chooses: `pendulum_version` = 0 or 1 (users do not pass it).
//
// State in float64 like the reference, every expression in the reference's
// operation order, so obs_dtype=float64 reproduces it bit for bit when the
// action arrives as float64 (a float32 action makes NumPy 2 compute the torque
// terms in float32 there; torchpool always hands the env doubles).
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "../../core/env.h"
#include "python_numerics.h"

namespace torchpool::classic {

struct PendulumModel {
  static constexpr double kMaxSpeed = 8;
  static constexpr double kMaxTorque = 2.0;
  static constexpr double kDt = 0.05;
  static constexpr double kMass = 1.0;
  static constexpr double kLength = 1.0;

  bool v0;
  double gravity;
  double gravity_term;  // 3 * g / (2 * l) (v0: -3 * g / (2 * l)), evaluated once in the reference's order

  explicit PendulumModel(const Config& config)
      : v0(version_of(config) == 0), gravity(config.real("g")), gravity_term((v0 ? -3 : 3) * gravity / (2 * kLength)) {}

  static int64_t version_of(const Config& config) {
    const int64_t version = config.integer("pendulum_version");
    if (version != 0 && version != 1)
      throw std::invalid_argument("pendulum_version must be 0 or 1, got " + std::to_string(version));
    return version;
  }

  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    spec.observations = {{{3}, obs_dtype, {-1.0, -1.0, -kMaxSpeed}, {1.0, 1.0, kMaxSpeed}}};
    spec.action.discrete = false;
    spec.action.shape = {1};
    spec.action.low = {-kMaxTorque};
    spec.action.high = {kMaxTorque};
    spec.max_episode_steps = 200;
    spec.step_cost_ns = 60;
    return spec;
  }
};

class Pendulum {
 public:
  using Model = PendulumModel;
  explicit Pendulum(const Model& model) : model_(model) {}

  // The reference's defaults DEFAULT_X = pi, DEFAULT_Y = 1.0: theta first.
  void reset(Rng& rng, StepOutput& out) {
    state_[0] = rng.uniform(-M_PI, M_PI);
    state_[1] = rng.uniform(-1.0, 1.0);
    write_observation(out);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    const double th = state_[0], thdot = state_[1];
    // np.clip(u, -max_torque, max_torque)[0]
    const double u = std::min(std::max(action.values[0], -Model::kMaxTorque), Model::kMaxTorque);
    const double costs = python_square(angle_normalize(th)) + 0.1 * python_square(thdot) + 0.001 * python_square(u);
    // 3.0 / (m * l**2) is exactly 3.0 for m = l = 1.
    const double sine = model_.v0 ? std::sin(th + M_PI) : std::sin(th);
    double newthdot =
        thdot +
        (model_.gravity_term * sine + 3.0 / (Model::kMass * (Model::kLength * Model::kLength)) * u) * Model::kDt;
    const double unclipped = newthdot;
    newthdot = std::min(std::max(newthdot, -Model::kMaxSpeed), Model::kMaxSpeed);
    const double newth = th + (model_.v0 ? unclipped : newthdot) * Model::kDt;
    state_[0] = newth, state_[1] = newthdot;
    write_observation(out);

    StepResult result;
    result.reward = -costs;  // never terminates; the time limit truncates
    return result;
  }

  // State injection for parity tests: (theta, thetadot).
  static constexpr int kStateSize = 2;
  void get_state(double* out) const { std::copy(state_, state_ + 2, out); }
  void set_state(const double* in) { std::copy(in, in + 2, state_); }

 private:
  void write_observation(StepOutput& out) const {
    out.set_observation({std::cos(state_[0]), std::sin(state_[0]), state_[1]});
  }

  // angle_normalize (pendulum.py, bottom): ((x + pi) % (2 * pi)) - pi, where %
  // is NumPy's float remainder: the sign of the divisor, unlike std::fmod.
  static double angle_normalize(double x) { return python_mod(x + M_PI, 2 * M_PI) - M_PI; }

  const Model& model_;
  double state_[2] = {0, 0};
};

}  // namespace torchpool::classic
