// env.h — the Env concept every family implements, and the small types it uses.
//
// A family is one header with two types:
//
//   struct Model {                       // immutable, built once per pool, shared by all envs
//     explicit Model(const Config&);     // reads the task kwargs
//     EnvSpec spec(Dtype obs_dtype) const;
//   };
//   struct MyEnv {                       // mutable, one per env, touched by one thread at a time
//     using Model = ...;
//     explicit MyEnv(const Model&);
//     void reset(Rng&, StepOutput&);                          // writes the first observation
//     StepResult step(const Action&, Rng&, StepOutput&);       // writes the next observation
//     // optional, for a step that is a run of substeps (MuJoCo's frame_skip mj_steps):
//     int substeps() const;
//     void advance(const Action&);   // runs the next substep ahead of step(), which runs the rest
//   };
//
// The core owns everything else: time limits, autoreset, episode statistics
// and final observations (episode.h), where the row lives, and threads. With
// advance(), the substeps of one step may run on different threads, one at
// a time (NOTE [Split tail] in split_tail.h). An env
// never allocates per step and never sees Python.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>

#include "spec.h"

namespace torchpool {

// Per-env random numbers, seeded from (seed, env_id) so results never depend on
// which thread stepped the env. xoshiro256**, seeded through splitmix64.
class Rng {
 public:
  explicit Rng(uint64_t seed = 0) { reseed(seed); }

  void reseed(uint64_t seed) {
    for (uint64_t& word : state_) {
      seed += 0x9E3779B97F4A7C15ULL;
      uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      word = z ^ (z >> 31);
    }
  }

  uint64_t next() {
    const uint64_t result = rotl(state_[1] * 5, 7) * 9;
    const uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotl(state_[3], 45);
    return result;
  }

  // Uniform in [low, high), 53 random bits.
  double uniform(double low, double high) {
    return low + (high - low) * (static_cast<double>(next() >> 11) * 0x1.0p-53);
  }

  // Uniform integer in [0, n).
  int64_t integer(int64_t n) { return static_cast<int64_t>(uniform(0.0, static_cast<double>(n))); }

 private:
  static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t state_[4];
};

// A validated action for one env, already in the pool's canonical form:
// discrete actions as an index, continuous ones as doubles (never clipped by
// the core: each family clips exactly where its reference does).
struct Action {
  int64_t index = 0;
  const double* values = nullptr;
  int64_t size = 0;
};

struct StepResult {
  double reward = 0.0;
  bool terminated = false;
  bool truncated = false;  // family-side truncation (e.g. a diverged simulation)
};

// One env's row of the output: the observation and the family's extras.
class StepOutput {
 public:
  // extra_bytes[i]: the row bytes of extra i (checked in debug builds).
  StepOutput(void* observation, Dtype observation_dtype, uint8_t* const* extras, const size_t* extra_bytes,
             size_t extra_count)
      : observation_(observation),
        observation_dtype_(observation_dtype),
        extras_(extras),
        extra_bytes_(extra_bytes),
        extra_count_(extra_count) {}

  // Writes a continuous observation, converting to the pool's obs_dtype.
  void set_observation(const double* values, size_t count) {
    if (observation_dtype_ == Dtype::Float64) {
      std::memcpy(observation_, values, count * sizeof(double));
    } else {
      auto* out = static_cast<float*>(observation_);
      for (size_t i = 0; i < count; ++i) out[i] = static_cast<float>(values[i]);
    }
  }
  void set_observation(std::initializer_list<double> values) { set_observation(values.begin(), values.size()); }

  // Raw access for families with integer observations (Atari frames).
  template <class T>
  T* observation() {
    return static_cast<T*>(observation_);
  }

  // The elements of one of the family's extra fields in this row; the handle
  // comes from extra_field() (spec.h), which checked its type.
  template <class T>
  T* extra(const ExtraField<T>& field) {
#ifndef NDEBUG
    if (field.index >= extra_count_ || field.count * sizeof(T) > extra_bytes_[field.index])
      throw std::logic_error("an extra field handle does not fit this pool's extras");
#endif
    return reinterpret_cast<T*>(extras_[field.index]);
  }

 private:
  void* observation_;
  Dtype observation_dtype_;
  uint8_t* const* extras_;
  [[maybe_unused]] const size_t* extra_bytes_;
  [[maybe_unused]] size_t extra_count_;
};

// A family whose step is a run of substeps, begun one at a time with
// advance() (NOTE [Split tail]).
template <class Env>
concept SplitsSteps = requires(Env& env, const Action& action) {
  env.advance(action);
  env.substeps();
};

}  // namespace torchpool
