// mountain_car_continuous.h — MountainCarContinuous-v0, Gymnasium 1.x
// (gymnasium/envs/classic_control/continuous_mountain_car.py).
//
// The reference rounds its state to float32 at the end of every step, and from
// then on NumPy 2 does part of the next step's arithmetic in float32; see
// NOTE [Float32 state]. Mirroring that, obs_dtype=float64 reproduces it bit for
// bit when the action arrives as float64 (torchpool always hands the env
// doubles; a float32 action would make NumPy compute the force term in float32).
#pragma once

#include <algorithm>
#include <cmath>

#include "../../core/env.h"
#include "python_numerics.h"

namespace torchpool::classic {

struct MountainCarContinuousModel {
  static constexpr double kMinAction = -1.0;
  static constexpr double kMaxAction = 1.0;
  static constexpr double kMinPosition = -1.2;
  static constexpr double kMaxPosition = 0.6;
  static constexpr double kMaxSpeed = 0.07;
  static constexpr double kGoalPosition = 0.45;  // not MountainCar's 0.5
  static constexpr double kPower = 0.0015;

  double goal_velocity;

  explicit MountainCarContinuousModel(const Config& config) : goal_velocity(config.real("goal_velocity")) {}

  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    // The reference declares float32 bounds; keep them float32-rounded.
    spec.observations = {{{2},
                          obs_dtype,
                          {static_cast<float>(kMinPosition), static_cast<float>(-kMaxSpeed)},
                          {static_cast<float>(kMaxPosition), static_cast<float>(kMaxSpeed)}}};
    spec.action.discrete = false;
    spec.action.shape = {1};
    spec.action.low = {kMinAction};
    spec.action.high = {kMaxAction};
    spec.max_episode_steps = 999;
    spec.step_cost_ns = 25;
    return spec;
  }
};

class MountainCarContinuous {
 public:
  using Model = MountainCarContinuousModel;
  explicit MountainCarContinuous(const Model& model) : model_(model) {}

  void reset(Rng& rng, StepOutput& out) {
    state_[0] = rng.uniform(-0.6, -0.4);
    state_[1] = 0.0;
    state_is_float32_ = false;  // np.array([uniform, 0]) is float64
    out.set_observation(state_, 2);
  }

  // Line for line continuous_mountain_car.py step(); see NOTE [Float32 state].
  StepResult step(const Action& action, Rng&, StepOutput& out) {
    const Scalar::Kind state_kind = state_is_float32_ ? Scalar::kFloat32 : Scalar::kFloat64;
    Scalar position{state_kind, state_[0]};
    Scalar velocity{state_kind, state_[1]};
    // min(max(action[0], min_action), max_action): Python's min and max hand
    // back the np.float64 action itself unless they clip it to a Python float.
    const double raw = action.values[0];
    const Scalar force = raw < Model::kMinAction   ? python(Model::kMinAction)
                         : raw > Model::kMaxAction ? python(Model::kMaxAction)
                                                   : Scalar{Scalar::kFloat64, raw};

    // math.cos takes the (possibly float32) 3 * position and returns a Python float.
    const Scalar slope = python(0.0025 * std::cos((python(3) * position).value));
    velocity = velocity + (force * python(Model::kPower) - slope);
    if (velocity > python(Model::kMaxSpeed)) velocity = python(Model::kMaxSpeed);
    if (velocity < python(-Model::kMaxSpeed)) velocity = python(-Model::kMaxSpeed);
    position = position + velocity;
    if (position > python(Model::kMaxPosition)) position = python(Model::kMaxPosition);
    if (position < python(Model::kMinPosition)) position = python(Model::kMinPosition);
    if (position == python(Model::kMinPosition) && velocity < python(0)) velocity = python(0);

    StepResult result;
    result.terminated = position >= python(Model::kGoalPosition) && velocity >= python(model_.goal_velocity);
    // The reward uses the raw action, not the clipped force (line 176):
    // reward = 0; reward = 100.0 if terminated; reward -= math.pow(action[0], 2) * 0.1.
    result.reward = result.terminated ? 100.0 : 0.0;
    result.reward -= python_square(raw) * 0.1;

    // self.state = np.array([position, velocity], dtype=np.float32)
    state_[0] = round_to_float32(position.value);
    state_[1] = round_to_float32(velocity.value);
    state_is_float32_ = true;
    out.set_observation(state_, 2);
    return result;
  }

  // State injection for parity tests: (position, velocity). Injecting mirrors
  // `env.state = np.array([position, velocity])`, a float64 array: give the
  // reference float64 too, whatever the values (see NOTE [Float32 state]).
  static constexpr int kStateSize = 2;
  void get_state(double* out) const { std::copy(state_, state_ + 2, out); }
  void set_state(const double* in) {
    std::copy(in, in + 2, state_);
    state_is_float32_ = false;
  }

 private:
  // NOTE [Float32 state]: after reset the reference's state is a float64 array;
  // after every step it is a float32 array (line 178). NumPy 2 (NEP 50) then
  // computes np.float32 <op> Python float in float32, np.float32 <op> np.float64
  // in float64, and anything with a Python float alone in float64; comparisons
  // follow the same rule (np.float32(-1.2) == -1.2 is True). So each value of
  // step() carries which of the three it is, and every operation and comparison
  // happens in the precision NumPy would pick.
  struct Scalar {
    enum Kind { kFloat32, kFloat64, kPython };
    Kind kind;
    double value;

    static Kind promote(Scalar a, Scalar b) {
      if (a.kind == kFloat64 || b.kind == kFloat64) return kFloat64;
      if (a.kind == kFloat32 || b.kind == kFloat32) return kFloat32;
      return kPython;
    }
    static bool in_float32(Scalar a, Scalar b) { return promote(a, b) == kFloat32; }
    static float narrow(Scalar a) { return static_cast<float>(a.value); }

    friend Scalar operator+(Scalar a, Scalar b) {
      if (in_float32(a, b)) return {kFloat32, narrow(a) + narrow(b)};
      return {promote(a, b), a.value + b.value};
    }
    friend Scalar operator-(Scalar a, Scalar b) {
      if (in_float32(a, b)) return {kFloat32, narrow(a) - narrow(b)};
      return {promote(a, b), a.value - b.value};
    }
    friend Scalar operator*(Scalar a, Scalar b) {
      if (in_float32(a, b)) return {kFloat32, narrow(a) * narrow(b)};
      return {promote(a, b), a.value * b.value};
    }
    friend bool operator<(Scalar a, Scalar b) { return in_float32(a, b) ? narrow(a) < narrow(b) : a.value < b.value; }
    friend bool operator>(Scalar a, Scalar b) { return b < a; }
    friend bool operator>=(Scalar a, Scalar b) {
      return in_float32(a, b) ? narrow(a) >= narrow(b) : a.value >= b.value;
    }
    friend bool operator==(Scalar a, Scalar b) {
      return in_float32(a, b) ? narrow(a) == narrow(b) : a.value == b.value;
    }
  };
  static Scalar python(double value) { return {Scalar::kPython, value}; }

  const Model& model_;
  double state_[2] = {0, 0};
  bool state_is_float32_ = false;
};

}  // namespace torchpool::classic
