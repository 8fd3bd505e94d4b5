// numpy_random.h — NumPy's Generator(PCG64(SeedSequence(seed))), the stream Gymnasium's envs draw from
// (gymnasium.utils.seeding.np_random), reproduced draw for draw.
//
// Contract: for the same seed, NumpyGenerator yields the same numbers as NumPy 2.x's
//   rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed)))
// for the calls it mirrors: bit_generator.random_raw() (next_uint64), random(), integers(low, high) of
// int64 (endpoint=False), uniform(low, high), shuffle(list) and choice(range(...)) (= integers), in any
// interleaving; and random(shape) (random() per element, in C order), choice(n, p=p) and permutation(n).
// A family that lays out its episodes as a Gymnasium env does (MiniGrid's grids) draws from it in the
// reference's order.
//
// The specification is NumPy's source: numpy/random/bit_generator.pyx (SeedSequence: hashmix, mix,
// mix_entropy, generate_state), numpy/random/src/pcg64/pcg64.h (the 128-bit LCG, its XSL-RR output,
// the 32-bit halves a 64-bit output is split into), numpy/random/src/distributions/distributions.c
// (next_double, random_bounded_uint64_fill: Lemire's bounded draws, 32-bit ones for ranges that fit).
// tests/test_numpy_random.py checks this header against the installed NumPy.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <utility>
#include <vector>

namespace torchpool {

// numpy.random.SeedSequence of a non-negative integer entropy, no spawn key, pool size 4.
class SeedSequence {
 public:
  explicit SeedSequence(uint64_t entropy) {
    // _coerce_to_uint32_array: the integer's 32-bit words, least significant first (0 is one word).
    std::vector<uint32_t> words;
    do {
      words.push_back(static_cast<uint32_t>(entropy & 0xFFFFFFFFu));
      entropy >>= 32;
    } while (entropy != 0);
    mix_entropy(words);
  }

  // generate_state(n_words, np.uint32).
  std::vector<uint32_t> generate_state32(size_t n_words) const {
    std::vector<uint32_t> out(n_words);
    uint32_t hash_const = kInitB;
    for (size_t i = 0; i < n_words; ++i) {
      uint32_t value = pool_[i % kPoolSize];
      value ^= hash_const;
      hash_const *= kMultB;
      value *= hash_const;
      value ^= value >> kXShift;
      out[i] = value;
    }
    return out;
  }

  // generate_state(n_words, np.uint64): pairs of 32-bit words, the first the low half (NumPy's view).
  std::vector<uint64_t> generate_state64(size_t n_words) const {
    const std::vector<uint32_t> words = generate_state32(2 * n_words);
    std::vector<uint64_t> out(n_words);
    for (size_t i = 0; i < n_words; ++i) out[i] = uint64_t{words[2 * i]} | (uint64_t{words[2 * i + 1]} << 32);
    return out;
  }

 private:
  static constexpr size_t kPoolSize = 4;
  static constexpr uint32_t kInitA = 0x43b0d7e5, kMultA = 0x931e8875, kInitB = 0x8b51f9dd, kMultB = 0x58f38ded;
  static constexpr uint32_t kMixMultL = 0xca01f9dd, kMixMultR = 0x4973f715;
  static constexpr int kXShift = 16;  // 4 bytes * 8 / 2

  static uint32_t hashmix(uint32_t value, uint32_t& hash_const) {
    value ^= hash_const;
    hash_const *= kMultA;
    value *= hash_const;
    value ^= value >> kXShift;
    return value;
  }

  static uint32_t mix(uint32_t x, uint32_t y) {
    uint32_t result = kMixMultL * x - kMixMultR * y;
    result ^= result >> kXShift;
    return result;
  }

  void mix_entropy(const std::vector<uint32_t>& entropy) {
    uint32_t hash_const = kInitA;
    for (size_t i = 0; i < kPoolSize; ++i) pool_[i] = hashmix(i < entropy.size() ? entropy[i] : 0, hash_const);
    for (size_t src = 0; src < kPoolSize; ++src)
      for (size_t dst = 0; dst < kPoolSize; ++dst)
        if (src != dst) pool_[dst] = mix(pool_[dst], hashmix(pool_[src], hash_const));
    for (size_t src = kPoolSize; src < entropy.size(); ++src)
      for (size_t dst = 0; dst < kPoolSize; ++dst) pool_[dst] = mix(pool_[dst], hashmix(entropy[src], hash_const));
  }

  uint32_t pool_[kPoolSize] = {};
};

// numpy.random.Generator(PCG64(SeedSequence(seed))).
class NumpyGenerator {
 public:
  explicit NumpyGenerator(uint64_t seed) : NumpyGenerator(SeedSequence(seed)) {}

  explicit NumpyGenerator(const SeedSequence& seeds) {
    // PCG64's seeding: generate_state(4, uint64) = initstate (high, low), initseq (high, low);
    // pcg_setseq_128_srandom_r.
    const std::vector<uint64_t> words = seeds.generate_state64(4);
    const unsigned __int128 initstate = (static_cast<unsigned __int128>(words[0]) << 64) | words[1];
    const unsigned __int128 initseq = (static_cast<unsigned __int128>(words[2]) << 64) | words[3];
    state_ = 0;
    increment_ = (initseq << 1) | 1;
    step();
    state_ += initstate;
    step();
  }

  // bit_generator.random_raw(): step, then the XSL-RR output of the new state.
  uint64_t next_uint64() {
    step();
    const uint64_t folded = static_cast<uint64_t>(state_ >> 64) ^ static_cast<uint64_t>(state_);
    const unsigned rotation = static_cast<unsigned>(state_ >> 122);
    return (folded >> rotation) | (folded << ((64 - rotation) & 63));
  }

  // A 64-bit output serves two 32-bit draws, its low half first; the high half waits for the next one.
  uint32_t next_uint32() {
    if (has_half_) {
      has_half_ = false;
      return half_;
    }
    const uint64_t next = next_uint64();
    has_half_ = true;
    half_ = static_cast<uint32_t>(next >> 32);
    return static_cast<uint32_t>(next & 0xFFFFFFFFu);
  }

  // random(): 53 random bits in [0, 1).
  double random() { return static_cast<double>(next_uint64() >> 11) * (1.0 / 9007199254740992.0); }

  // uniform(low, high): low + (high - low) * random().
  double uniform(double low, double high) { return low + (high - low) * random(); }

  // random_interval(max): a value in [0, max] by masked rejection (32-bit draws where max fits them);
  // what shuffle() draws.
  uint64_t interval(uint64_t max) {
    if (max == 0) return 0;
    uint64_t mask = max;
    for (int shift = 1; shift <= 32; shift *= 2) mask |= mask >> shift;
    uint64_t value = 0;
    if (max <= 0xFFFFFFFFu) {
      while ((value = (next_uint32() & mask)) > max) {
      }
    } else {
      while ((value = (next_uint64() & mask)) > max) {
      }
    }
    return value;
  }

  // shuffle(x) of a Python list (the untyped path): Fisher-Yates from the end.
  template <class T>
  void shuffle(std::vector<T>& items) {
    for (size_t i = items.size(); i-- > 1;) std::swap(items[i], items[interval(i)]);
  }

  // choice(len(p), p=p) of one value (Generator.choice with replace, a scalar draw): the cdf is p.cumsum(),
  // summed left to right, divided by its last entry, and the draw is the first index whose cdf exceeds a
  // random() (searchsorted(side='right')). `p` is what the caller would pass NumPy, so its own arithmetic
  // (normalising, say) must be NumPy's too; NumPy's checks that p sums to 1 are not repeated here.
  int64_t choice(const std::vector<double>& p) {
    if (p.empty()) throw std::invalid_argument("choice: empty p");
    std::vector<double> cdf(p.size());
    double running = 0.0;
    for (size_t i = 0; i < p.size(); ++i) cdf[i] = running += p[i];
    const double last = cdf.back();
    for (double& value : cdf) value /= last;
    const double u = random();
    return std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin();
  }

  // permutation(n): arange(n) shuffled; an ndarray's shuffle draws as a list's does (shuffle() above).
  std::vector<int64_t> permutation(int64_t n) {
    std::vector<int64_t> items(static_cast<size_t>(n < 0 ? 0 : n));
    for (size_t i = 0; i < items.size(); ++i) items[i] = static_cast<int64_t>(i);
    shuffle(items);
    return items;
  }

  // integers(low, high) of int64, high excluded.
  int64_t integers(int64_t low, int64_t high) {
    if (high <= low) throw std::invalid_argument("integers: low >= high");
    const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low) - 1;  // inclusive span
    return static_cast<int64_t>(static_cast<uint64_t>(low) + bounded(range));
  }

 private:
  static constexpr unsigned __int128 kMultiplier =
      (static_cast<unsigned __int128>(0x2360ED051FC65DA4ULL) << 64) | 0x4385DF649FCCF645ULL;

  void step() { state_ = state_ * kMultiplier + increment_; }

  // random_bounded_uint64_fill of one value, use_masked=False: a value in [0, range].
  uint64_t bounded(uint64_t range) {
    if (range == 0) return 0;
    if (range <= 0xFFFFFFFFu) {
      if (range == 0xFFFFFFFFu) return next_uint32();
      const uint32_t excluded = static_cast<uint32_t>(range) + 1;
      uint64_t m = uint64_t{next_uint32()} * excluded;
      uint32_t leftover = static_cast<uint32_t>(m & 0xFFFFFFFFu);
      if (leftover < excluded) {
        const uint32_t threshold = (UINT32_MAX - static_cast<uint32_t>(range)) % excluded;
        while (leftover < threshold) {
          m = uint64_t{next_uint32()} * excluded;
          leftover = static_cast<uint32_t>(m & 0xFFFFFFFFu);
        }
      }
      return m >> 32;
    }
    if (range == UINT64_MAX) return next_uint64();
    const uint64_t excluded = range + 1;
    unsigned __int128 m = static_cast<unsigned __int128>(next_uint64()) * excluded;
    uint64_t leftover = static_cast<uint64_t>(m);
    if (leftover < excluded) {
      const uint64_t threshold = (UINT64_MAX - range) % excluded;
      while (leftover < threshold) {
        m = static_cast<unsigned __int128>(next_uint64()) * excluded;
        leftover = static_cast<uint64_t>(m);
      }
    }
    return static_cast<uint64_t>(m >> 64);
  }

  unsigned __int128 state_ = 0, increment_ = 0;
  bool has_half_ = false;
  uint32_t half_ = 0;
};

}  // namespace torchpool
