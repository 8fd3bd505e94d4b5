// resize.h — shrinking an Atari frame (one uint8 plane) to the agent's size.
//
// Both resizers pull source rows through a callback, `row(r, line)`, that
// fills `line` (floats holding whole grey levels 0..255) with source row r. The Atari env builds each row on demand
// from the emulator's palette indices (grey or one colour channel, max-pooled
// over two frames), so a full-size intermediate frame is never written, and
// each source row is built at most once per frame (the area resizer skips
// rows equal to the one before).
//
// Area (the default) reproduces OpenCV's cv2.resize(..., INTER_AREA) for a
// shrink bit for bit, which is what Gymnasium's AtariPreprocessing and EnvPool
// call: the same per-tap float weights, the same float accumulation order
// (each source row summed horizontally, then the rows weighted into the
// output row) and the same round-half-to-even. The taps are computed once per
// pool for the one (source, target) size pair and padded to a fixed count per
// output column with zero weights, so the inner loop has no branches
// (x + 0.0f == x exactly, so the padding changes no result).
//
// Bilinear is OpenCV's INTER_LINEAR geometry (pixel centres aligned,
// coordinates clamped at the border) in float; it may differ from OpenCV's
// fixed-point uint8 path by one grey level.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace torchpool::atari {

// One source sample's weight in one output cell along one axis.
struct Tap {
  int target;
  int source;
  float weight;
};

// OpenCV's computeResizeAreaTab: output cell d covers [d*scale, (d+1)*scale)
// of the source; whole source pixels weigh 1/cell, the partial ones at either
// end their covered fraction (fractions under 1e-3 dropped). Taps come out
// ordered by target, then source.
inline std::vector<Tap> area_taps(int source_size, int target_size) {
  const double scale = 1.0 / (static_cast<double>(target_size) / source_size);
  std::vector<Tap> taps;
  for (int d = 0; d < target_size; ++d) {
    const double begin = d * scale, end = begin + scale;
    const double cell = std::min(scale, source_size - begin);
    int first = static_cast<int>(std::ceil(begin)), last = static_cast<int>(std::floor(end));
    last = std::min(last, source_size - 1);
    first = std::min(first, last);
    if (first - begin > 1e-3) taps.push_back({d, first - 1, static_cast<float>((first - begin) / cell)});
    for (int s = first; s < last; ++s) taps.push_back({d, s, static_cast<float>(1.0 / cell)});
    if (end - last > 1e-3)
      taps.push_back({d, last, static_cast<float>(std::min(std::min(end - last, 1.0), cell) / cell)});
  }
  return taps;
}

inline uint8_t round_to_u8(float value) {
  const long rounded = std::lrint(value);  // round half to even, as cvRound
  return static_cast<uint8_t>(std::clamp(rounded, 0L, 255L));
}

// round_to_u8 over a row; SSE2's conversion rounds half to even too (the
// default MXCSR mode) and packs with the same saturation.
inline void round_row(const float* values, uint8_t* out, int count) {
  int x = 0;
#if defined(__SSE2__)
  for (; x + 16 <= count; x += 16) {
    const __m128i a = _mm_cvtps_epi32(_mm_loadu_ps(values + x));
    const __m128i b = _mm_cvtps_epi32(_mm_loadu_ps(values + x + 4));
    const __m128i c = _mm_cvtps_epi32(_mm_loadu_ps(values + x + 8));
    const __m128i d = _mm_cvtps_epi32(_mm_loadu_ps(values + x + 12));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + x),
                     _mm_packus_epi16(_mm_packs_epi32(a, b), _mm_packs_epi32(c, d)));
  }
#endif
  for (; x < count; ++x) out[x] = round_to_u8(values[x]);
}

class AreaResize {
 public:
  AreaResize(int source_height, int source_width, int height, int width)
      : width_(width), rows_(area_taps(source_height, height)), line_(source_width), row_sum_(width),
        out_sum_(width) {
    // Columns: the taps of each output column, padded to the same count.
    const std::vector<Tap> columns = area_taps(source_width, width);
    std::vector<int> count(width, 0);
    for (const Tap& tap : columns) ++count[tap.target];
    taps_per_column_ = *std::max_element(count.begin(), count.end());
    column_source_.assign(static_cast<size_t>(width) * taps_per_column_, 0);
    column_weight_.assign(static_cast<size_t>(width) * taps_per_column_, 0.0f);
    std::fill(count.begin(), count.end(), 0);
    for (const Tap& tap : columns) {
      const size_t k = static_cast<size_t>(tap.target) * taps_per_column_ + count[tap.target]++;
      column_source_[k] = tap.source;
      column_weight_[k] = tap.weight;
    }
  }

  // Not thread-safe (scratch rows): one per env.
  //
  // `same_as_previous(s)` says whether source row s equals row s - 1 as `row`
  // would build it. Such a row reuses the horizontal sums already made: equal
  // inputs give equal floats, so the output is unchanged bit for bit. Atari
  // screens repeat rows a lot (backgrounds, a playfield drawn at a coarser
  // vertical resolution than the scanlines, sprites several lines tall): on
  // Pong most rows repeat, and building and summing rows was ~90% of a resize.
  template <class Row, class SameAsPrevious>
  void operator()(const Row& row, const SameAsPrevious& same_as_previous, uint8_t* target) {
    std::fill(out_sum_.begin(), out_sum_.end(), 0.0f);
    int current = rows_.front().target, built = -1;
    for (const Tap& tap : rows_) {
      if (tap.source != built) {  // consecutive taps often share a source row
        if (built < 0 || built != tap.source - 1 || !same_as_previous(tap.source)) {
          row(tap.source, line_.data());
          sum_columns();
        }
        built = tap.source;
      }
      if (tap.target != current) {
        round_row(out_sum_.data(), target + static_cast<size_t>(current) * width_, width_);
        for (int x = 0; x < width_; ++x) out_sum_[x] = tap.weight * row_sum_[x];
        current = tap.target;
      } else {
        for (int x = 0; x < width_; ++x) out_sum_[x] += tap.weight * row_sum_[x];
      }
    }
    round_row(out_sum_.data(), target + static_cast<size_t>(current) * width_, width_);
  }

 private:
  // K > 0 makes the tap count a compile-time constant, so the common cases
  // (2 or 3 taps for 160 -> 84) compile to straight-line code; K == 0 reads
  // it at run time.
  template <int K>
  void sum_columns_of() {
    const int taps = K > 0 ? K : taps_per_column_;
    const int* source = column_source_.data();
    const float* weight = column_weight_.data();
    for (int x = 0; x < width_; ++x, source += taps, weight += taps) {
      float sum = line_[source[0]] * weight[0];
      for (int k = 1; k < taps; ++k) sum += line_[source[k]] * weight[k];
      row_sum_[x] = sum;
    }
  }

  void sum_columns() {
    switch (taps_per_column_) {
      case 1: return sum_columns_of<1>();
      case 2: return sum_columns_of<2>();
      case 3: return sum_columns_of<3>();
      case 4: return sum_columns_of<4>();
      default: return sum_columns_of<0>();
    }
  }

  int width_, taps_per_column_ = 1;
  std::vector<Tap> rows_;
  std::vector<int> column_source_;
  std::vector<float> column_weight_;
  std::vector<float> line_;
  std::vector<float> row_sum_, out_sum_;
};

class BilinearResize {
 public:
  BilinearResize(int source_height, int source_width, int height, int width)
      : height_(height), width_(width), rows_(axis(source_height, height)), columns_(axis(source_width, width)),
        top_(source_width), bottom_(source_width) {}

  template <class Row>
  void operator()(const Row& row, uint8_t* target) {
    for (int y = 0; y < height_; ++y) {
      const Sample& r = rows_[y];
      row(r.low, top_.data());
      row(r.high, bottom_.data());
      for (int x = 0; x < width_; ++x) {
        const Sample& c = columns_[x];
        const float upper = top_[c.low] + c.fraction * (top_[c.high] - top_[c.low]);
        const float lower = bottom_[c.low] + c.fraction * (bottom_[c.high] - bottom_[c.low]);
        target[static_cast<size_t>(y) * width_ + x] = round_to_u8(upper + r.fraction * (lower - upper));
      }
    }
  }

 private:
  struct Sample {
    int low, high;
    float fraction;
  };

  static std::vector<Sample> axis(int source_size, int target_size) {
    const double scale = static_cast<double>(source_size) / target_size;
    std::vector<Sample> samples(target_size);
    for (int d = 0; d < target_size; ++d) {
      const double position = std::clamp((d + 0.5) * scale - 0.5, 0.0, source_size - 1.0);
      const int low = static_cast<int>(position);
      samples[d] = {low, std::min(low + 1, source_size - 1), static_cast<float>(position - low)};
    }
    return samples;
  }

  int height_, width_;
  std::vector<Sample> rows_, columns_;
  std::vector<float> top_, bottom_;
};

}  // namespace torchpool::atari
