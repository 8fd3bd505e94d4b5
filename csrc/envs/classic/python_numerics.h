// python_numerics.h — Python/NumPy float semantics the classic references rely on
// (and python_square, x**2, the MuJoCo tasks' too).
//
// Bit-for-bit parity with Gymnasium needs the same rounding as the reference's
// Python arithmetic, which differs from the obvious C++ in three places.
#pragma once

#include <cmath>

namespace torchpool::classic {

// x**2 and math.pow(x, 2) (and x**2 on a NumPy float64 scalar) call libm
// pow(), which glibc rounds differently from x*x about once in a thousand; compilers rewrite pow(x, 2.0) as x*x, so the
// exponent is hidden from them.
inline double python_square(double x) {
  volatile double two = 2.0;
  return std::pow(x, two);
}

// Through a volatile: GCC 12.2 at -O2 miscompiles two adjacent
// `s[0] = (float)a; s[1] = (float)b;` into stores of a and b unrounded (its
// SLP vectorizer drops the round trip).
inline double round_to_float32(double x) {
  volatile float rounded = static_cast<float>(x);
  return rounded;
}

// Python's float %: the result takes the divisor's sign, unlike std::fmod.
inline double python_mod(double x, double divisor) {
  double mod = std::fmod(x, divisor);
  if (mod != 0) {
    if ((divisor < 0) != (mod < 0)) mod += divisor;
  } else {
    mod = std::copysign(0.0, divisor);
  }
  return mod;
}

}  // namespace torchpool::classic
