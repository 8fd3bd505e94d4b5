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
//     explicit MyEnv(const Model&);     // or MyEnv(const Model&, size_t env_id)
//     void reset(Rng&, StepOutput&);                          // writes the first observation
//     StepResult step(const Action&, Rng&, StepOutput&);       // writes the next observation
//     // optional, for a step that is a run of substeps (MuJoCo's frame_skip mj_steps):
//     int substeps() const;
//     void advance(const Action&);   // runs the next substep ahead of step(), which runs the rest
//   };
//
// Construction: a pool builds its envs on several threads at once when the
// env is costly (plan_schedule's build_threads, threads.h), each env on one
// thread. So an env's constructor may run beside another env's: it may read
// the const Model freely but must lock anything else it shares (a global
// cache, a library that is not thread-safe to initialise).
//
// The core owns everything else: time limits, autoreset, episode statistics
// and final observations (episode.h), where the row lives, and threads. With
// advance(), the substeps of one step may run on different threads, one at
// a time (NOTE [Split tail] in split_tail.h). An env
// never allocates per step and never sees Python.
#pragma once

#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>

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

// One env's row of the output: the observation's fields and the family's extras.
class StepOutput {
 public:
  // observations[i]: field i of the observation (EnvSpec::observations), of
  // dtype observation_dtypes[i]; extra_bytes[i]: the row bytes of extra i
  // (checked in debug builds).
  StepOutput(uint8_t* const* observations, const Dtype* observation_dtypes, size_t observation_count,
             uint8_t* const* extras, const size_t* extra_bytes, size_t extra_count)
      : observations_(observations),
        observation_dtypes_(observation_dtypes),
        observation_count_(observation_count),
        extras_(extras),
        extra_bytes_(extra_bytes),
        extra_count_(extra_count) {}

  // Writes observation field `field` (the one field by default) from doubles,
  // converting to its dtype (the pool's obs_dtype for continuous fields).
  void set_observation(size_t field, const double* values, size_t count) {
    void* out = observations_[field];
    switch (observation_dtypes_[field]) {
      case Dtype::Float64:
        std::memcpy(out, values, count * sizeof(double));
        return;
      case Dtype::Float32:
        return convert<float>(out, values, count);
      case Dtype::Int64:
        return convert<int64_t>(out, values, count);
      case Dtype::Int32:
        return convert<int32_t>(out, values, count);
      case Dtype::UInt8:
        return convert<uint8_t>(out, values, count);
      case Dtype::Bool:
        return convert<bool>(out, values, count);
    }
  }
  void set_observation(const double* values, size_t count) { set_observation(0, values, count); }
  void set_observation(std::initializer_list<double> values) { set_observation(0, values.begin(), values.size()); }
  void set_observation(size_t field, std::initializer_list<double> values) {
    set_observation(field, values.begin(), values.size());
  }

  // Raw access to observation field `field`, e.g. Atari's uint8 frames; T
  // must be the field's dtype (checked in debug builds).
  template <class T>
  T* observation(size_t field = 0) {
#ifndef NDEBUG
    if (field >= observation_count_ || observation_dtypes_[field] != dtype_of<T>())
      throw std::logic_error("observation field " + std::to_string(field) + " is not of the requested type");
#endif
    return reinterpret_cast<T*>(observations_[field]);
  }

  // The raw bytes of observation field `field` and of extra `index`, for a
  // family that copies rows it received whole (the process family).
  uint8_t* observation_bytes(size_t field) { return observations_[field]; }
  uint8_t* extra_bytes(size_t index) { return extras_[index]; }

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
  template <class T>
  static void convert(void* out, const double* values, size_t count) {
    auto* typed = static_cast<T*>(out);
    for (size_t i = 0; i < count; ++i) typed[i] = static_cast<T>(values[i]);
  }

  uint8_t* const* observations_;
  const Dtype* observation_dtypes_;
  [[maybe_unused]] size_t observation_count_;
  uint8_t* const* extras_;
  [[maybe_unused]] const size_t* extra_bytes_;
  [[maybe_unused]] size_t extra_count_;
};

// What every family is (see the top of this file): checked where a family is
// registered (plugin.h's family<E>()), so a type that falls short is named
// with this concept in the compiler's message.
template <class E>
concept EnvConcept =
    requires { typename E::Model; } && std::constructible_from<typename E::Model, const Config&> &&
    (std::constructible_from<E, const typename E::Model&> ||
     std::constructible_from<E, const typename E::Model&, size_t>) &&
    requires(E& env, const typename E::Model& model, Rng& rng, StepOutput& out, const Action& action, Dtype dtype) {
      { model.spec(dtype) } -> std::convertible_to<EnvSpec>;
      env.reset(rng, out);
      { env.step(action, rng, out) } -> std::convertible_to<StepResult>;
    };

// NOTE [Begun steps]. A family whose envs run elsewhere (the process family,
// csrc/envs/process/: a Python env in a worker process) would spend a whole
// step waiting in each step() if envs only started when a thread reached
// them. With begin(), the core starts every env of a send() (or reset) at
// once, in the caller's thread at push time, telling it whether run() will
// reset it (resets) or step it with `action`; the thread that later runs the
// env calls reset()/step() as always, which collect the result. An env that
// was begun but not run (a call discarded by Ctrl-C) must cope with the
// next begin() (the process family waits out the first: NOTE [Lost answers]).
// Optional, with two companions a remote env needs: a constructor taking the
// env's id, and reseed(seed), told every seed the env's Rng is given
// (seed + env_id at construction, and reset(seed=...)'s).
template <class Env>
concept BeginsSteps = requires(Env& env, const Action& action) { env.begin(true, action); };

template <class Env>
concept ReseedsEnv = requires(Env& env, uint64_t seed) { env.reseed(seed); };

// A family that can show an env's current screen (SB3's VecVideoRecorder,
// Gymnasium's render_mode="rgb_array"): writes it as RGB bytes into `pixels`
// (resized as needed) and returns its shape {height, width, 3}.
template <class Env>
concept RendersFrames = requires(const Env& env, std::vector<uint8_t>& pixels) {
  { env.render(pixels) } -> std::same_as<std::vector<int64_t>>;
};

// A family whose step is a run of substeps, begun one at a time with
// advance() (NOTE [Split tail]).
template <class Env>
concept SplitsSteps = requires(Env& env, const Action& action) {
  env.advance(action);
  env.substeps();
};

}  // namespace torchpool
