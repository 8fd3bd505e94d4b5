// rewards.h — dm_control's rewards.tolerance (dm_control/utils/rewards.py), the one function every
// Control Suite reward is built from.
//
// Contract: tolerance(x, bounds, margin, sigmoid, value_at_margin) is 1 inside the closed bounds
// (either may be infinite); outside, 0 when margin is 0, else the sigmoid of the distance to the
// nearer bound in units of margin, scaled so that the sigmoid is value_at_margin one margin away.
// The expressions keep NumPy's order of operations ((x * scale) ** 2 is the square of the product),
// so a reward equals dm_control's to the last bit wherever libm's exp/cos agree with NumPy's.
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

namespace torchpool::dmc {

enum class Sigmoid { Gaussian, Hyperbolic, LongTail, Reciprocal, Cosine, Linear, Quadratic, TanhSquared };

struct Bounds {
  double lower = 0.0, upper = 0.0;
};

inline constexpr double kInf = INFINITY;
inline constexpr double kDefaultValueAtMargin = 0.1;

// rewards._sigmoids' check of value_at_1.
inline void check_value_at_1(double value_at_1, Sigmoid kind) {
  const bool may_be_zero = kind == Sigmoid::Cosine || kind == Sigmoid::Linear || kind == Sigmoid::Quadratic;
  if (may_be_zero ? !(0.0 <= value_at_1 && value_at_1 < 1.0) : !(0.0 < value_at_1 && value_at_1 < 1.0))
    throw std::invalid_argument("value_at_margin must be in " + std::string(may_be_zero ? "[0, 1)" : "(0, 1)") +
                                ", got " + std::to_string(value_at_1));
}

// rewards._sigmoids: x >= 0 is the distance in margins; value_at_1 the value one margin away.
inline double sigmoid(double x, double value_at_1, Sigmoid kind) {
  check_value_at_1(value_at_1, kind);
  switch (kind) {
    case Sigmoid::Gaussian: {
      const double scale = std::sqrt(-2.0 * std::log(value_at_1)), scaled = x * scale;
      return std::exp(-0.5 * (scaled * scaled));
    }
    case Sigmoid::Hyperbolic:
      return 1.0 / std::cosh(x * std::acosh(1.0 / value_at_1));
    case Sigmoid::LongTail: {
      const double scaled = x * std::sqrt(1.0 / value_at_1 - 1.0);
      return 1.0 / (scaled * scaled + 1.0);
    }
    case Sigmoid::Reciprocal:
      return 1.0 / (std::fabs(x) * (1.0 / value_at_1 - 1.0) + 1.0);
    case Sigmoid::Cosine: {
      const double scaled = x * (std::acos(2.0 * value_at_1 - 1.0) / M_PI);
      return std::fabs(scaled) < 1.0 ? (1.0 + std::cos(M_PI * scaled)) / 2.0 : 0.0;
    }
    case Sigmoid::Linear: {
      const double scaled = x * (1.0 - value_at_1);
      return std::fabs(scaled) < 1.0 ? 1.0 - scaled : 0.0;
    }
    case Sigmoid::Quadratic: {
      const double scaled = x * std::sqrt(1.0 - value_at_1);
      return std::fabs(scaled) < 1.0 ? 1.0 - scaled * scaled : 0.0;
    }
    case Sigmoid::TanhSquared: {
      const double t = std::tanh(x * std::atanh(std::sqrt(1.0 - value_at_1)));
      return 1.0 - t * t;
    }
  }
  throw std::invalid_argument("unknown sigmoid");
}

// rewards.tolerance for one value.
inline double tolerance(double x, Bounds bounds = {}, double margin = 0.0, Sigmoid kind = Sigmoid::Gaussian,
                        double value_at_margin = kDefaultValueAtMargin) {
  if (bounds.lower > bounds.upper) throw std::invalid_argument("tolerance: lower bound must be <= upper bound");
  if (margin < 0.0) throw std::invalid_argument("tolerance: margin must be non-negative");
  // With a margin, NumPy evaluates the sigmoid (and its check) for in-bounds values too.
  if (margin != 0.0) check_value_at_1(value_at_margin, kind);
  if (bounds.lower <= x && x <= bounds.upper) return 1.0;
  if (margin == 0.0) return 0.0;
  const double distance = (x < bounds.lower ? bounds.lower - x : x - bounds.upper) / margin;
  return sigmoid(distance, value_at_margin, kind);
}

}  // namespace torchpool::dmc
