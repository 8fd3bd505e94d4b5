// screen.h — the emulator's frames as palette indices, and which of their rows are equal.
//
// The area resizer builds and sums each distinct source row once
// (resize.h); `EqualRows` tells it which rows are the same. A frame's row r
// with the same palette indices as an earlier row (in each frame the
// observation pools over) builds the same line of grey or colour values.
// Two passes keep the check cheap: `scan_rows` marks rows equal to the row
// above (most repeats, found while the frame is read or copied anyway); only
// the rows that start a new run are hashed and looked up among the frame's
// earlier runs, and a hash match is confirmed byte for byte.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace torchpool::atari {

// Sets repeats[r] to whether row r of `frame` equals row r - 1 (repeats[0] =
// 0) and, if `copy` is given, copies the frame there in the same pass.
inline void scan_rows(const uint8_t* frame, uint8_t* copy, uint8_t* repeats, int height, int width) {
  const size_t w = static_cast<size_t>(width);
  if (copy != nullptr) std::memcpy(copy, frame, w);
  repeats[0] = 0;
  for (int r = 1; r < height; ++r) {
    const uint8_t* row = frame + r * w;
    const uint8_t* above = row - w;
    uint8_t* into = copy != nullptr ? copy + r * w : nullptr;
    size_t x = 0;
    bool equal = true;
#if defined(__SSE2__)
    __m128i differ = _mm_setzero_si128();
    for (; x + 16 <= w; x += 16) {
      const __m128i pixels = _mm_loadu_si128(reinterpret_cast<const __m128i*>(row + x));
      differ =
          _mm_or_si128(differ, _mm_xor_si128(pixels, _mm_loadu_si128(reinterpret_cast<const __m128i*>(above + x))));
      if (into != nullptr) _mm_storeu_si128(reinterpret_cast<__m128i*>(into + x), pixels);
    }
    equal = _mm_movemask_epi8(_mm_cmpeq_epi8(differ, _mm_setzero_si128())) == 0xFFFF;
#endif
    for (; x < w; ++x) {
      equal = equal && row[x] == above[x];
      if (into != nullptr) into[x] = row[x];
    }
    repeats[r] = equal ? 1 : 0;
  }
}

class EqualRows {
 public:
  EqualRows(int height, int width)
      : height_(height), width_(static_cast<size_t>(width)), first_(height), slots_(table_size(height)) {}

  // first[r] = the first row of the frame that is equal to row r in `last`
  // and (when pooling) in `before`; each frame's repeats come from scan_rows.
  const int* find(const uint8_t* last, const uint8_t* last_repeats, const uint8_t* before,
                  const uint8_t* before_repeats) {
    if (++generation_ == 0) {  // wrapped: stale slots could look current
      for (Slot& slot : slots_) slot.generation = 0;
      generation_ = 1;
    }
    const size_t mask = slots_.size() - 1;
    for (int r = 0; r < height_; ++r) {
      if (r > 0 && last_repeats[r] && (before == nullptr || before_repeats[r])) {
        first_[r] = first_[r - 1];
        continue;
      }
      const uint64_t hash = hash_row(last + r * width_, before == nullptr ? nullptr : before + r * width_);
      first_[r] = r;
      for (size_t i = hash & mask;; i = (i + 1) & mask) {
        Slot& slot = slots_[i];
        if (slot.generation != generation_) {
          slot = {hash, r, generation_};
          break;
        }
        if (slot.hash == hash && equal_rows(last, before, slot.row, r)) {
          first_[r] = slot.row;
          break;
        }
      }
    }
    return first_.data();
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    int row = 0;
    uint32_t generation = 0;
  };

  // A power of two at least twice the rows: probes stay short.
  static size_t table_size(int height) {
    size_t size = 16;
    while (size < 2 * static_cast<size_t>(height)) size *= 2;
    return size;
  }

  // Words rotated by their position and xor-ed: independent operations
  // that pipeline (a multiply per word chained through the hash took longer
  // than the rest of find()); a collision only costs a memcmp.
  uint64_t hash_row(const uint8_t* row, const uint8_t* other) const {
    uint64_t hash = 0;
    auto mix = [&hash](const uint8_t* bytes, size_t count, unsigned turn) {
      size_t x = 0;
      for (; x + 8 <= count; x += 8, turn += 17) {
        uint64_t word;
        std::memcpy(&word, bytes + x, 8);
        turn &= 63;
        hash ^= turn == 0 ? word : (word << turn) | (word >> (64 - turn));
      }
      for (; x < count; ++x) hash = (hash ^ bytes[x]) * 0x100000001B3ull;
    };
    mix(row, width_, 0);
    if (other != nullptr) mix(other, width_, 7);
    hash *= 0xFF51AFD7ED558CCDull;
    return hash ^ (hash >> 32);
  }

  bool equal_rows(const uint8_t* last, const uint8_t* before, int a, int b) const {
    if (std::memcmp(last + a * width_, last + b * width_, width_) != 0) return false;
    return before == nullptr || std::memcmp(before + a * width_, before + b * width_, width_) == 0;
  }

  int height_;
  size_t width_;
  std::vector<int> first_;
  std::vector<Slot> slots_;
  uint32_t generation_ = 0;
};

}  // namespace torchpool::atari
