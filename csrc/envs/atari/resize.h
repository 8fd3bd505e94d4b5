// resize.h — shrinking an Atari frame (one uint8 plane) to the agent's size.
//
// Area (the default) reproduces OpenCV's cv2.resize(..., INTER_AREA) for a
// non-integer shrink bit for bit, which is what Gymnasium's AtariPreprocessing
// and EnvPool call: the same per-tap float weights, the same float
// accumulation order (each source row summed horizontally, then the rows
// weighted into the output row) and the same round-half-to-even. Nothing is
// generic at run time: the taps are computed once per pool for the one
// (source, target) size pair, so a 210x160 -> 84x84 frame is ~36k
// multiply-adds with no branching on weights.
//
// Bilinear is OpenCV's INTER_LINEAR geometry (pixel centres aligned,
// coordinates clamped at the border) in float; it may differ from OpenCV's
// fixed-point uint8 path by one grey level.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace torchpool::atari {

// One source sample's weight in one output cell along one axis.
struct Tap {
  int target;
  int source;
  float weight;
};

// OpenCV's computeResizeAreaTab: output cell d covers [d*scale, (d+1)*scale)
// of the source; whole source pixels weigh 1/cell, the partial ones at either
// end their covered fraction (fractions under 1e-3 dropped).
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

class AreaResize {
 public:
  AreaResize(int source_height, int source_width, int height, int width)
      : source_width_(source_width), width_(width),
        rows_(area_taps(source_height, height)), columns_(area_taps(source_width, width)),
        row_sum_(width), out_sum_(width) {}

  // Not thread-safe (scratch rows): one per env.
  void operator()(const uint8_t* source, uint8_t* target) {
    std::fill(out_sum_.begin(), out_sum_.end(), 0.0f);
    int current = rows_.front().target;
    for (const Tap& row : rows_) {
      const uint8_t* line = source + static_cast<size_t>(row.source) * source_width_;
      std::fill(row_sum_.begin(), row_sum_.end(), 0.0f);
      for (const Tap& column : columns_) row_sum_[column.target] += line[column.source] * column.weight;
      if (row.target != current) {
        uint8_t* out = target + static_cast<size_t>(current) * width_;
        for (int x = 0; x < width_; ++x) {
          out[x] = round_to_u8(out_sum_[x]);
          out_sum_[x] = row.weight * row_sum_[x];
        }
        current = row.target;
      } else {
        for (int x = 0; x < width_; ++x) out_sum_[x] += row.weight * row_sum_[x];
      }
    }
    uint8_t* out = target + static_cast<size_t>(current) * width_;
    for (int x = 0; x < width_; ++x) out[x] = round_to_u8(out_sum_[x]);
  }

 private:
  int source_width_, width_;
  std::vector<Tap> rows_, columns_;
  std::vector<float> row_sum_, out_sum_;
};

class BilinearResize {
 public:
  BilinearResize(int source_height, int source_width, int height, int width)
      : source_width_(source_width), height_(height), width_(width),
        rows_(axis(source_height, height)), columns_(axis(source_width, width)) {}

  void operator()(const uint8_t* source, uint8_t* target) const {
    for (int y = 0; y < height_; ++y) {
      const Sample& r = rows_[y];
      const uint8_t* top = source + static_cast<size_t>(r.low) * source_width_;
      const uint8_t* bottom = source + static_cast<size_t>(r.high) * source_width_;
      for (int x = 0; x < width_; ++x) {
        const Sample& c = columns_[x];
        const float upper = top[c.low] + c.fraction * (top[c.high] - top[c.low]);
        const float lower = bottom[c.low] + c.fraction * (bottom[c.high] - bottom[c.low]);
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

  int source_width_, height_, width_;
  std::vector<Sample> rows_, columns_;
};

}  // namespace torchpool::atari
