// cartpole.h — CartPole-v1, Gymnasium 1.x (gymnasium/envs/classic_control/cartpole.py).
//
// Euler integration with the reference's constants; state in float64 like the
// reference, so obs_dtype=float64 reproduces it bit for bit.
#pragma once

#include <cmath>

#include "../../core/env.h"

namespace torchpool::classic {

struct CartPoleModel {
  static constexpr double kGravity = 9.8;
  static constexpr double kMassCart = 1.0;
  static constexpr double kMassPole = 0.1;
  static constexpr double kTotalMass = kMassPole + kMassCart;
  static constexpr double kLength = 0.5;  // half the pole's length
  static constexpr double kPoleMassLength = kMassPole * kLength;
  static constexpr double kForceMag = 10.0;
  static constexpr double kTau = 0.02;
  static constexpr double kThetaThreshold = 12 * 2 * M_PI / 360;
  static constexpr double kXThreshold = 2.4;

  bool sutton_barto_reward;

  explicit CartPoleModel(const Config& config) : sutton_barto_reward(config.flag("sutton_barto_reward")) {}

  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    const double inf = std::numeric_limits<double>::infinity();
    // The reference declares float32 bounds; keep them float32-rounded.
    const double x_high = static_cast<float>(kXThreshold * 2);
    const double theta_high = static_cast<float>(kThetaThreshold * 2);
    spec.observations = {{{4}, obs_dtype, {-x_high, -inf, -theta_high, -inf}, {x_high, inf, theta_high, inf}}};
    spec.action.discrete = true;
    spec.action.num_actions = 2;
    spec.max_episode_steps = 500;
    spec.step_cost_ns = 30;
    return spec;
  }
};

class CartPole {
 public:
  using Model = CartPoleModel;
  explicit CartPole(const Model& model) : model_(model) {}

  void reset(Rng& rng, StepOutput& out) {
    for (double& value : state_) value = rng.uniform(-0.05, 0.05);
    out.set_observation(state_, 4);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    auto [x, x_dot, theta, theta_dot] = state_;
    const double force = action.index == 1 ? Model::kForceMag : -Model::kForceMag;
    const double costheta = std::cos(theta);
    const double sintheta = std::sin(theta);
    const double temp = (force + Model::kPoleMassLength * (theta_dot * theta_dot) * sintheta) / Model::kTotalMass;
    const double thetaacc =
        (Model::kGravity * sintheta - costheta * temp) /
        (Model::kLength * (4.0 / 3.0 - Model::kMassPole * (costheta * costheta) / Model::kTotalMass));
    const double xacc = temp - Model::kPoleMassLength * thetaacc * costheta / Model::kTotalMass;
    x = x + Model::kTau * x_dot;
    x_dot = x_dot + Model::kTau * xacc;
    theta = theta + Model::kTau * theta_dot;
    theta_dot = theta_dot + Model::kTau * thetaacc;
    state_[0] = x, state_[1] = x_dot, state_[2] = theta, state_[3] = theta_dot;
    out.set_observation(state_, 4);

    StepResult result;
    result.terminated = x < -Model::kXThreshold || x > Model::kXThreshold || theta < -Model::kThetaThreshold ||
                        theta > Model::kThetaThreshold;
    // The executor never steps past termination, so the reference's
    // steps_beyond_terminated branch reduces to this.
    if (model_.sutton_barto_reward)
      result.reward = result.terminated ? -1.0 : 0.0;
    else
      result.reward = 1.0;
    return result;
  }

  // State injection for parity tests: (x, x_dot, theta, theta_dot).
  static constexpr int kStateSize = 4;
  void get_state(double* out) const { std::copy(state_, state_ + 4, out); }
  void set_state(const double* in) { std::copy(in, in + 4, state_); }

 private:
  const Model& model_;
  double state_[4] = {0, 0, 0, 0};
};

}  // namespace torchpool::classic
