// my_cartpole.h — CartPole-v1 written as your own C++ env: one header,
// outside torchpool, compiled on first use.
//
//   torchpool.register_cpp_env("MyCartPole-v0", "my_cartpole.h", env_class="MyCartPole")
//   pool = torchpool.make("MyCartPole-v0", num_envs=64)
//
// A family is a Model (immutable, built once per pool from the task kwargs,
// shared by every env) and an env (one per env slot, stepped by one thread at
// a time). The engine does the rest: threads, time limits, autoreset,
// episode statistics, seeding. Gymnasium's cartpole.py, step for step: with
// obs_dtype=torch.float64 it matches CartPole-v1 bit for bit.
#pragma once

#include <torchpool/env.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

struct MyCartPoleModel {
  double force_mag;  // a task kwarg: torchpool.make("MyCartPole-v0", force_mag=...)

  explicit MyCartPoleModel(const torchpool::Config& config) : force_mag(config.real("force_mag")) {}

  // The kwargs and defaults the registry checks and fills (python -m torchpool list shows them).
  static std::vector<torchpool::TaskKwarg> kwargs() {
    return {{"force_mag", "float", "10.0", "the push on the cart, in newtons"}};
  }

  torchpool::EnvSpec spec(torchpool::Dtype obs_dtype) const {
    const double inf = std::numeric_limits<double>::infinity();
    const double x_high = static_cast<float>(2.4 * 2), theta_high = static_cast<float>(12 * 2 * M_PI / 360 * 2);
    torchpool::EnvSpec spec;
    spec.observations = {{{4}, obs_dtype, {-x_high, -inf, -theta_high, -inf}, {x_high, inf, theta_high, inf}}};
    spec.action.discrete = true;
    spec.action.num_actions = 2;
    spec.max_episode_steps = 500;
    spec.step_cost_ns = 30;  // cheap: the calling thread steps runs of envs itself
    return spec;
  }
};

class MyCartPole {
 public:
  using Model = MyCartPoleModel;
  explicit MyCartPole(const Model& model) : model_(model) {}

  void reset(torchpool::Rng& rng, torchpool::StepOutput& out) {
    for (double& value : state_) value = rng.uniform(-0.05, 0.05);
    out.set_observation(state_, 4);
  }

  torchpool::StepResult step(const torchpool::Action& action, torchpool::Rng&, torchpool::StepOutput& out) {
    constexpr double gravity = 9.8, mass_cart = 1.0, mass_pole = 0.1, total_mass = mass_pole + mass_cart;
    constexpr double length = 0.5, pole_mass_length = mass_pole * length, tau = 0.02;
    auto [x, x_dot, theta, theta_dot] = state_;
    const double force = action.index == 1 ? model_.force_mag : -model_.force_mag;
    const double costheta = std::cos(theta), sintheta = std::sin(theta);
    const double temp = (force + pole_mass_length * (theta_dot * theta_dot) * sintheta) / total_mass;
    const double thetaacc = (gravity * sintheta - costheta * temp) /
                            (length * (4.0 / 3.0 - mass_pole * (costheta * costheta) / total_mass));
    const double xacc = temp - pole_mass_length * thetaacc * costheta / total_mass;
    state_[0] = x + tau * x_dot;
    state_[1] = x_dot + tau * xacc;
    state_[2] = theta + tau * theta_dot;
    state_[3] = theta_dot + tau * thetaacc;
    out.set_observation(state_, 4);

    torchpool::StepResult result;
    const double theta_threshold = 12 * 2 * M_PI / 360;
    result.terminated =
        state_[0] < -2.4 || state_[0] > 2.4 || state_[2] < -theta_threshold || state_[2] > theta_threshold;
    result.reward = 1.0;
    return result;
  }

  // Optional: state injection, which the parity tests use.
  static constexpr int kStateSize = 4;
  void get_state(double* out) const { std::copy(state_, state_ + 4, out); }
  void set_state(const double* in) { std::copy(in, in + 4, state_); }

 private:
  const Model& model_;
  double state_[4] = {0, 0, 0, 0};
};
