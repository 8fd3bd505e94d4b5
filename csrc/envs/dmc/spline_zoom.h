// spline_zoom.h — SciPy's `ndimage.zoom(image, factor)` of a 2-D array with its defaults (cubic spline,
// prefilter on, mode 'constant', grid_mode off), the smoothing quadruped escape gives its terrain bumps.
//
// The contract is bit equality with SciPy: the same spline prefilter (one pole, mirror boundary, axis 0
// then axis 1), the same coordinate map (out index * (in - 1) / (out - 1)), the same weights and the same
// order of every sum, so the terrain dm_control writes into the height field (as float32) is the one
// written here. tests/test_dmc.py compares it with SciPy's on random images; test_dmc_parity.py runs
// quadruped escape on dm_control's own terrain from the same bumps.
#pragma once

#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace torchpool::dmc {

namespace spline_detail {

// The cubic B-spline's pole, sqrt(3) - 2.
constexpr double kPole = -0.267949192431122706472553658494127633;

// Turns one line of samples into cubic B-spline coefficients in place (SciPy's prefilter with the mirror
// boundary it uses for mode 'constant'): gain, then a causal and an anticausal recursive pass.
inline void prefilter_line(double* c, std::ptrdiff_t stride, std::ptrdiff_t n) {
  if (n < 2) return;
  auto at = [&](std::ptrdiff_t i) -> double& { return c[i * stride]; };
  const double z = kPole;
  const double gain = 1.0 * ((1.0 - z) * (1.0 - 1.0 / z));
  for (std::ptrdiff_t i = 0; i < n; ++i) at(i) *= gain;
  double z_i = z;
  const double z_n_1 = std::pow(z, static_cast<double>(n - 1));
  at(0) = at(0) + z_n_1 * at(n - 1);
  for (std::ptrdiff_t i = 1; i < n - 1; ++i) {
    at(0) += z_i * (at(i) + z_n_1 * at(n - 1 - i));
    z_i *= z;
  }
  at(0) /= 1 - z_n_1 * z_n_1;
  for (std::ptrdiff_t i = 1; i < n; ++i) at(i) += z * at(i - 1);
  at(n - 1) = (z * at(n - 2) + at(n - 1)) * z / (z * z - 1);
  for (std::ptrdiff_t i = n - 2; i >= 0; --i) at(i) = z * (at(i + 1) - at(i));
}

// Where one output index samples an axis of `in` samples: the first of four coefficient indices (mirrored
// at the edges) and their weights; `inside` is false past the last sample (mode 'constant' gives 0 there).
struct Tap {
  bool inside = false;
  std::ptrdiff_t index[4] = {0, 0, 0, 0};
  double weight[4] = {0, 0, 0, 0};
};

inline Tap tap(std::ptrdiff_t k, double zoom, std::ptrdiff_t in) {
  Tap t;
  const double x = static_cast<double>(k) * zoom;
  if (x < 0 || x > static_cast<double>(in - 1)) return t;
  t.inside = true;
  const std::ptrdiff_t start = static_cast<std::ptrdiff_t>(std::floor(x)) - 1;
  const std::ptrdiff_t s2 = 2 * in - 2;
  for (int j = 0; j < 4; ++j) {
    std::ptrdiff_t idx = start + j;
    if (in <= 1) {
      idx = 0;
    } else if (idx < 0) {
      idx = s2 * (-idx / s2) + idx;
      idx = idx <= 1 - in ? idx + s2 : -idx;
    } else if (idx >= in) {
      idx -= s2 * (idx / s2);
      if (idx >= in) idx = s2 - idx;
    }
    t.index[j] = idx;
  }
  const double y = x - std::floor(x), w = 1.0 - y;
  t.weight[1] = (y * y * (y - 2.0) * 3.0 + 4.0) / 6.0;
  t.weight[2] = (w * w * (w - 2.0) * 3.0 + 4.0) / 6.0;
  t.weight[0] = w * w * w / 6.0;
  t.weight[3] = 1.0;
  for (int j = 0; j < 3; ++j) t.weight[3] -= t.weight[j];
  return t;
}

}  // namespace spline_detail

// `image` (rows x cols, row-major) zoomed by `factor` on both axes: an output of round(rows * factor) x
// round(cols * factor), row-major.
inline std::vector<double> spline_zoom(const std::vector<double>& image, std::ptrdiff_t rows, std::ptrdiff_t cols,
                                       double factor) {
  using namespace spline_detail;
  if (rows < 1 || cols < 1 || static_cast<std::ptrdiff_t>(image.size()) != rows * cols)
    throw std::invalid_argument("spline_zoom: the image is not rows x cols");
  const auto out_rows = static_cast<std::ptrdiff_t>(std::nearbyint(static_cast<double>(rows) * factor));
  const auto out_cols = static_cast<std::ptrdiff_t>(std::nearbyint(static_cast<double>(cols) * factor));
  if (out_rows < 1 || out_cols < 1) throw std::invalid_argument("spline_zoom: the zoomed image is empty");
  std::vector<double> c = image;
  for (std::ptrdiff_t j = 0; j < cols; ++j) prefilter_line(c.data() + j, cols, rows);
  for (std::ptrdiff_t i = 0; i < rows; ++i) prefilter_line(c.data() + i * cols, 1, cols);
  // SciPy maps output index k to k * (in - 1) / (out - 1) (1 when out is 1).
  auto zoom_of = [](std::ptrdiff_t in, std::ptrdiff_t out) {
    return out > 1 ? static_cast<double>(in - 1) / static_cast<double>(out - 1) : 1.0;
  };
  std::vector<Tap> row_taps(out_rows), col_taps(out_cols);
  for (std::ptrdiff_t k = 0; k < out_rows; ++k) row_taps[k] = tap(k, zoom_of(rows, out_rows), rows);
  for (std::ptrdiff_t k = 0; k < out_cols; ++k) col_taps[k] = tap(k, zoom_of(cols, out_cols), cols);
  std::vector<double> out(out_rows * out_cols, 0.0);
  for (std::ptrdiff_t r = 0; r < out_rows; ++r) {
    const Tap& tr = row_taps[r];
    if (!tr.inside) continue;
    for (std::ptrdiff_t q = 0; q < out_cols; ++q) {
      const Tap& tc = col_taps[q];
      if (!tc.inside) continue;
      double t = 0.0;
      for (int a = 0; a < 4; ++a)
        for (int b = 0; b < 4; ++b) {
          double coeff = c[tr.index[a] * cols + tc.index[b]];
          coeff *= tr.weight[a];
          coeff *= tc.weight[b];
          t += coeff;
        }
      out[r * out_cols + q] = t;
    }
  }
  return out;
}

}  // namespace torchpool::dmc
