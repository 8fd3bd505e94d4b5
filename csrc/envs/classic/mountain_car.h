// mountain_car.h — MountainCar-v0, Gymnasium 1.x (gymnasium/envs/classic_control/mountain_car.py).
//
// State in float64 like the reference (it keeps float64 scalars between
// steps), every expression in the reference's order, so obs_dtype=float64
// reproduces it bit for bit.
#pragma once

#include <algorithm>
#include <cmath>

#include "../../core/env.h"

namespace torchpool::classic {

struct MountainCarModel {
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;
  static constexpr double kGoalPosition = 0.5;
  static constexpr double kForce = 0.001;
  static constexpr double kGravity = 0.0025;

  double goal_velocity;

  explicit MountainCarModel(const Config& config) : goal_velocity(config.real("goal_velocity")) {}

  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    // The reference declares float32 bounds; keep them float32-rounded.
    spec.observations = {{{2},
                          obs_dtype,
                          {static_cast<float>(kMinPosition), static_cast<float>(-kMaxSpeed)},
                          {static_cast<float>(kMaxPosition), static_cast<float>(kMaxSpeed)}}};
    spec.action.discrete = true;
    spec.action.num_actions = 3;
    spec.max_episode_steps = 200;
    spec.step_cost_ns = 20;
    return spec;
  }
};

class MountainCar {
 public:
  using Model = MountainCarModel;
  explicit MountainCar(const Model& model) : model_(model) {}

  void reset(Rng& rng, StepOutput& out) {
    state_[0] = rng.uniform(-0.6, -0.4);
    state_[1] = 0.0;
    out.set_observation(state_, 2);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    auto [position, velocity] = state_;
    velocity += static_cast<double>(action.index - 1) * Model::kForce + std::cos(3 * position) * (-Model::kGravity);
    // np.clip(velocity, ...), then np.clip(position, ...): min(max(x, low), high).
    velocity = std::min(std::max(velocity, -Model::kMaxSpeed), Model::kMaxSpeed);
    position += velocity;
    position = std::min(std::max(position, Model::kMinPosition), Model::kMaxPosition);
    if (position == Model::kMinPosition && velocity < 0) velocity = 0;
    state_[0] = position, state_[1] = velocity;
    out.set_observation(state_, 2);

    StepResult result;
    result.terminated = position >= Model::kGoalPosition && velocity >= model_.goal_velocity;
    result.reward = -1.0;
    return result;
  }

  // State injection for parity tests: (position, velocity).
  static constexpr int kStateSize = 2;
  void get_state(double* out) const { std::copy(state_, state_ + 2, out); }
  void set_state(const double* in) { std::copy(in, in + 2, state_); }

 private:
  const Model& model_;
  double state_[2] = {0, 0};
};

}  // namespace torchpool::classic
