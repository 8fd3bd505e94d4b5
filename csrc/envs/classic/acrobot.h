// acrobot.h — Acrobot-v1, Gymnasium 1.x (gymnasium/envs/classic_control/acrobot.py).
//
// The reference's defaults: book_or_nips = "book", torque_noise_max = 0, one
// rk4 step of dt = 0.2. State in float64 (reset rounds it to float32, like the
// reference), every expression in the reference's order, so obs_dtype=float64
// reproduces it bit for bit.
#pragma once

#include <algorithm>
#include <cmath>

#include "../../core/env.h"
#include "python_numerics.h"

namespace torchpool::classic {

struct AcrobotModel {
  static constexpr double kDt = 0.2;
  static constexpr double kLinkLength1 = 1.0;
  static constexpr double kLinkMass1 = 1.0;
  static constexpr double kLinkMass2 = 1.0;
  static constexpr double kLinkComPosition1 = 0.5;
  static constexpr double kLinkComPosition2 = 0.5;
  static constexpr double kLinkMomentOfInertia = 1.0;
  static constexpr double kGravity = 9.8;
  static constexpr double kMaxVelocity1 = 4 * M_PI;
  static constexpr double kMaxVelocity2 = 9 * M_PI;
  static constexpr double kTorques[3] = {-1.0, 0.0, +1.0};

  explicit AcrobotModel(const Config&) {}

  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    // The reference declares float32 bounds; keep them float32-rounded.
    const double v1 = static_cast<float>(kMaxVelocity1);
    const double v2 = static_cast<float>(kMaxVelocity2);
    spec.observations = {{{6}, obs_dtype, {-1.0, -1.0, -1.0, -1.0, -v1, -v2}, {1.0, 1.0, 1.0, 1.0, v1, v2}}};
    spec.action.discrete = true;
    spec.action.num_actions = 3;
    spec.max_episode_steps = 500;
    spec.step_cost_ns = 400;
    return spec;
  }
};

class Acrobot {
 public:
  using Model = AcrobotModel;
  explicit Acrobot(const Model&) {}

  // uniform(-0.1, 0.1, size=(4,)).astype(np.float32): the state starts float32-rounded.
  void reset(Rng& rng, StepOutput& out) {
    for (double& value : state_) value = round_to_float32(rng.uniform(-0.1, 0.1));
    write_observation(out);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    const double torque = Model::kTorques[action.index];
    rk4(torque);
    state_[0] = wrap(state_[0], -M_PI, M_PI);
    state_[1] = wrap(state_[1], -M_PI, M_PI);
    state_[2] = bound(state_[2], -Model::kMaxVelocity1, Model::kMaxVelocity1);
    state_[3] = bound(state_[3], -Model::kMaxVelocity2, Model::kMaxVelocity2);
    write_observation(out);

    StepResult result;
    result.terminated = -std::cos(state_[0]) - std::cos(state_[1] + state_[0]) > 1.0;
    result.reward = result.terminated ? 0.0 : -1.0;
    return result;
  }

  // State injection for parity tests: (theta1, theta2, dtheta1, dtheta2).
  static constexpr int kStateSize = 4;
  void get_state(double* out) const { std::copy(state_, state_ + 4, out); }
  void set_state(const double* in) { std::copy(in, in + 4, state_); }

 private:
  void write_observation(StepOutput& out) const {
    out.set_observation(
        {std::cos(state_[0]), std::sin(state_[0]), std::cos(state_[1]), std::sin(state_[1]), state_[2], state_[3]});
  }

  // rk4(self._dsdt, s_augmented, [0, self.dt]): one step, elementwise in the
  // reference's order. The torque is the augmented fifth element; its
  // derivative is 0.0, so it stays exactly the torque in every stage.
  void rk4(double torque) {
    const double dt = Model::kDt;  // t[1] - t[0] with t = [0, self.dt]
    const double dt2 = dt / 2.0;
    double k1[4], k2[4], k3[4], k4[4], y[4];
    dsdt(state_, torque, k1);
    for (int i = 0; i < 4; ++i) y[i] = state_[i] + dt2 * k1[i];
    dsdt(y, torque, k2);
    for (int i = 0; i < 4; ++i) y[i] = state_[i] + dt2 * k2[i];
    dsdt(y, torque, k3);
    for (int i = 0; i < 4; ++i) y[i] = state_[i] + dt * k3[i];
    dsdt(y, torque, k4);
    for (int i = 0; i < 4; ++i) state_[i] = state_[i] + dt / 6.0 * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]);
  }

  // _dsdt, book variant, written as the reference writes it (x**2 on a Python
  // float constant is exact; on a state value it is python_square).
  static void dsdt(const double* s, double a, double* derivative) {
    constexpr double m1 = Model::kLinkMass1, m2 = Model::kLinkMass2, l1 = Model::kLinkLength1;
    constexpr double lc1 = Model::kLinkComPosition1, lc2 = Model::kLinkComPosition2;
    constexpr double I1 = Model::kLinkMomentOfInertia, I2 = Model::kLinkMomentOfInertia;
    constexpr double g = Model::kGravity;
    const double theta1 = s[0], theta2 = s[1], dtheta1 = s[2], dtheta2 = s[3];
    const double d1 = m1 * (lc1 * lc1) + m2 * ((l1 * l1) + (lc2 * lc2) + 2 * l1 * lc2 * std::cos(theta2)) + I1 + I2;
    const double d2 = m2 * ((lc2 * lc2) + l1 * lc2 * std::cos(theta2)) + I2;
    const double phi2 = m2 * lc2 * g * std::cos(theta1 + theta2 - M_PI / 2.0);
    const double phi1 = -m2 * l1 * lc2 * python_square(dtheta2) * std::sin(theta2) -
                        2 * m2 * l1 * lc2 * dtheta2 * dtheta1 * std::sin(theta2) +
                        (m1 * lc1 + m2 * l1) * g * std::cos(theta1 - M_PI / 2) + phi2;
    const double ddtheta2 = (a + d2 / d1 * phi1 - m2 * l1 * lc2 * python_square(dtheta1) * std::sin(theta2) - phi2) /
                            (m2 * (lc2 * lc2) + I2 - python_square(d2) / d1);
    const double ddtheta1 = -(d2 * ddtheta2 + phi1) / d1;
    derivative[0] = dtheta1, derivative[1] = dtheta2, derivative[2] = ddtheta1, derivative[3] = ddtheta2;
  }

  // wrap(x, m, M): shift by M - m until m <= x <= M.
  static double wrap(double x, double m, double M) {
    const double diff = M - m;
    while (x > M) x = x - diff;
    while (x < m) x = x + diff;
    return x;
  }

  // bound(x, m, M) = min(max(x, m), M) with Python's min and max.
  static double bound(double x, double m, double M) { return std::min(std::max(x, m), M); }

  double state_[4] = {0, 0, 0, 0};
};

}  // namespace torchpool::classic
