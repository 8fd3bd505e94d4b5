// resize.h — shrinking an Atari frame (one uint8 plane) to the agent's size.
//
// Both resizers pull source rows through a callback, `row(r, line)`, that
// fills `line` (floats holding whole grey levels 0..255) with source row r.
// The Atari env builds each row on demand from the emulator's palette
// indices (grey or one colour channel, max-pooled over two frames), so a
// full-size intermediate frame is never written; the area resizer builds
// each distinct row once per frame.
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
#include <cstring>
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
      : width_(width),
        taps_(area_taps(source_height, height)),
        line_(source_width),
        out_sum_(width),
        row_sums_(static_cast<size_t>(source_height) * width),
        sums_of_(source_height) {
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
    // Rows: each output row's run of taps, and its twin: the latest earlier
    // output row with the same weights in the same order (2.5 source rows per
    // output row alternate two weight patterns, so usually the row two up).
    out_rows_.resize(height);
    for (int first = 0, end = 0; first < static_cast<int>(taps_.size()); first = end) {
      while (end < static_cast<int>(taps_.size()) && taps_[end].target == taps_[first].target) ++end;
      OutputRow& row = out_rows_[taps_[first].target];
      row = {first, end - first, -1};
      for (int earlier = taps_[first].target - 1; earlier >= 0 && row.twin < 0; --earlier)
        if (same_weights(row, out_rows_[earlier])) row.twin = earlier;
    }
  }

  // Not thread-safe (scratch rows): one per env.
  //
  // `first_equal[s]` (<= s) is the first source row that `row` builds the
  // same as row s (screen.h finds them). Atari screens repeat rows a lot
  // (backgrounds, a playfield drawn at a coarser vertical resolution than
  // the scanlines, sprites several lines tall): a Pong frame has ~10
  // distinct rows in 210. Only a row's first occurrence is built and summed
  // horizontally; and an output row whose taps fall on the same rows as its
  // twin's (same weights, same inputs, so the same floats bit for bit) is
  // copied from the twin.
  template <class Row>
  void operator()(const Row& row, const int* first_equal, uint8_t* target) {
    int resolved = -1, built = 0;  // source rows [0, resolved] have their sums
    auto resolve_through = [&](int source) {
      while (resolved < source) {
        ++resolved;
        if (first_equal[resolved] != resolved) {
          sums_of_[resolved] = sums_of_[first_equal[resolved]];
        } else {
          row(resolved, line_.data());
          sums_of_[resolved] = built++;
          sum_columns(row_sums_.data() + static_cast<size_t>(sums_of_[resolved]) * width_);
        }
      }
    };
    for (int y = 0; y < static_cast<int>(out_rows_.size()); ++y) {
      const OutputRow& out = out_rows_[y];
      const Tap* taps = taps_.data() + out.first_tap;
      resolve_through(taps[out.taps - 1].source);
      uint8_t* line = target + static_cast<size_t>(y) * width_;
      if (out.twin >= 0 && same_inputs(out, out_rows_[out.twin])) {
        std::memcpy(line, target + static_cast<size_t>(out.twin) * width_, width_);
        continue;
      }
      // The same float operations, in the same order, as OpenCV's vertical pass.
      const float* sums = sums_of(taps[0].source);
      for (int x = 0; x < width_; ++x) out_sum_[x] = taps[0].weight * sums[x];
      for (int k = 1; k < out.taps; ++k) {
        sums = sums_of(taps[k].source);
        const float weight = taps[k].weight;
        for (int x = 0; x < width_; ++x) out_sum_[x] += weight * sums[x];
      }
      round_row(out_sum_.data(), line, width_);
    }
  }

 private:
  struct OutputRow {
    int first_tap, taps, twin;
  };

  bool same_weights(const OutputRow& a, const OutputRow& b) const {
    if (a.taps != b.taps) return false;
    for (int k = 0; k < a.taps; ++k)
      if (taps_[a.first_tap + k].weight != taps_[b.first_tap + k].weight) return false;
    return true;
  }

  bool same_inputs(const OutputRow& a, const OutputRow& b) const {
    for (int k = 0; k < a.taps; ++k)
      if (sums_of_[taps_[a.first_tap + k].source] != sums_of_[taps_[b.first_tap + k].source]) return false;
    return true;
  }

  const float* sums_of(int source) const { return row_sums_.data() + static_cast<size_t>(sums_of_[source]) * width_; }

  // K > 0 makes the tap count a compile-time constant, so the common cases
  // (2 or 3 taps for 160 -> 84) compile to straight-line code; K == 0 reads
  // it at run time.
  template <int K>
  void sum_columns_of(float* row_sum) const {
    const int taps = K > 0 ? K : taps_per_column_;
    const int* source = column_source_.data();
    const float* weight = column_weight_.data();
    for (int x = 0; x < width_; ++x, source += taps, weight += taps) {
      float sum = line_[source[0]] * weight[0];
      for (int k = 1; k < taps; ++k) sum += line_[source[k]] * weight[k];
      row_sum[x] = sum;
    }
  }

  void sum_columns(float* row_sum) const {
    switch (taps_per_column_) {
      case 1:
        return sum_columns_of<1>(row_sum);
      case 2:
        return sum_columns_of<2>(row_sum);
      case 3:
        return sum_columns_of<3>(row_sum);
      case 4:
        return sum_columns_of<4>(row_sum);
      default:
        return sum_columns_of<0>(row_sum);
    }
  }

  int width_, taps_per_column_ = 1;
  std::vector<Tap> taps_;  // rows: ordered by output row, then source row
  std::vector<OutputRow> out_rows_;
  std::vector<int> column_source_;
  std::vector<float> column_weight_;
  std::vector<float> line_, out_sum_;
  std::vector<float> row_sums_;  // one width-long row of horizontal sums per distinct source row
  std::vector<int> sums_of_;     // source row -> its row in row_sums_ (this frame)
};

class BilinearResize {
 public:
  BilinearResize(int source_height, int source_width, int height, int width)
      : height_(height),
        width_(width),
        rows_(axis(source_height, height)),
        columns_(axis(source_width, width)),
        top_(source_width),
        bottom_(source_width) {}

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
