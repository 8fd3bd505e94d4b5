// episode.h — one env's episode bookkeeping, the part of a step that is not the family's.
//
// An EnvSlot holds an env with its Rng and episode state, and runs one reset
// or step into a Row of the output: the family writes the observation and its
// extras; the slot writes reward, terminated, truncated, done and the
// episode's running return and length, applies the time limit and the
// autoreset rule, keeps the final observation, and turns an exception into a
// failed row (NOTE [Env failures]). A slot is touched by one thread at a time
// (the executor never queues an env twice); the caller reads its fields only
// after it received the env's row (acquire on the FillCounter), so they are
// plain fields.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "env.h"
#include "errors.h"
#include "output_ring.h"
#include "spec.h"

namespace torchpool {

enum class Autoreset : int32_t { kSameStep = 0, kNextStep = 1, kDisabled = 2 };

// Fixed output fields, in column order; the family's extras follow.
enum Field : size_t {
  kObservation = 0,
  kReward,
  kTerminated,
  kTruncated,
  kDone,
  kEnvId,
  kEpisodeReturn,
  kEpisodeLength,
  kFinalObservation,  // only with same_step autoreset
};

inline constexpr size_t kMaxExtras = 16;

// Where one env's row goes: each fixed field (final_observation only with
// same_step autoreset) and each of the family's extras.
// Only the fields the pool has are set (no zeroing: this is built per env step).
struct Row {
  std::array<uint8_t*, kFinalObservation + 1> field;
  std::array<uint8_t*, kMaxExtras> extras;

  template <class T>
  T& at(Field index) const {
    return *reinterpret_cast<T*>(field[index]);
  }
};

// The columns of a step's output: the fixed fields, in Field order, then the family's extras.
inline std::vector<FieldSpec> output_fields(const EnvSpec& spec, Autoreset autoreset) {
  const ObservationSpec& obs = spec.observation;
  std::vector<FieldSpec> fields = {
      {"observation", obs.dtype, obs.shape},
      {"reward", Dtype::Float32, {}},
      {"terminated", Dtype::Bool, {}},
      {"truncated", Dtype::Bool, {}},
      {"done", Dtype::Bool, {}},
      {"env_id", Dtype::Int64, {}},
      {"episode_return", Dtype::Float32, {}},
      {"episode_length", Dtype::Int64, {}},
  };
  if (autoreset == Autoreset::kSameStep) fields.push_back({"final_observation", obs.dtype, obs.shape});
  for (const FieldSpec& extra : spec.extras) fields.push_back(extra);
  return fields;
}

// What every env of a pool follows; built once.
struct EpisodeRules {
  Autoreset autoreset = Autoreset::kSameStep;
  int64_t max_episode_steps = 0;  // 0: no time limit
  Dtype observation_dtype = Dtype::Float32;
  size_t observation_bytes = 0;
  size_t fixed_fields = 0;          // columns before the extras (output_fields)
  std::vector<size_t> extra_bytes;  // row bytes of each extra

  static EpisodeRules of(const EnvSpec& spec, Autoreset autoreset) {
    const FieldSpec observation{"observation", spec.observation.dtype, spec.observation.shape};
    const size_t fixed = autoreset == Autoreset::kSameStep ? kFinalObservation + 1 : kFinalObservation;
    EpisodeRules rules{autoreset, spec.max_episode_steps, spec.observation.dtype, observation.row_bytes(), fixed, {}};
    for (const FieldSpec& extra : spec.extras) rules.extra_bytes.push_back(extra.row_bytes());
    return rules;
  }

  // Where row `index` of a block (laid out by output_fields) goes.
  Row row_at(const FieldTargets& targets, size_t index) const {
    Row row;
    for (size_t i = 0; i < fixed_fields; ++i) row.field[i] = targets.at(i, index);
    for (size_t i = 0; i < extra_bytes.size(); ++i) row.extras[i] = targets.at(fixed_fields + i, index);
    return row;
  }

  // Each extra gets an 8-byte-aligned place in a slot's scratch row, so any
  // dtype may follow any other (a bool then a float64).
  static size_t aligned(size_t bytes) { return (bytes + 7) / 8 * 8; }
  size_t scratch_bytes() const {
    size_t bytes = 0;
    for (const size_t extra : extra_bytes) bytes += aligned(extra);
    return std::max<size_t>(bytes, 1);
  }
};

template <class Env>
struct EnvSlot {
  Env env;
  Rng rng;
  double episode_return = 0.0;
  int64_t episode_length = 0;
  bool started = false;       // reset at least once
  bool episode_over = false;  // next_step/disabled: the last step ended the episode
  uint64_t pending_seed = 0;  // caller-written before the push that uses it
  bool has_pending_seed = false;
  bool failed = false;                  // NOTE [Env failures]: reset before the next step
  std::string failure;                  // the message, until the caller takes it
  std::vector<uint8_t> extras_scratch;  // same_step: the autoreset's extras land here

  EnvSlot(const typename Env::Model& model, uint64_t seed, const EpisodeRules& rules)
      : env(model), rng(seed), extras_scratch(rules.scratch_bytes()) {}

  bool may_step(Autoreset autoreset) const {
    return started && !(autoreset == Autoreset::kDisabled && (failed || episode_over));
  }

  // Whether a step action resets this env instead (see run()).
  bool resets_on_step(Autoreset autoreset) const {
    return failed || (autoreset == Autoreset::kNextStep && episode_over);
  }

  // Why env `id` may not step now (when !may_step()).
  std::string refuses_step(int64_t id, Autoreset autoreset) const {
    const std::string env_name = "env " + std::to_string(id);
    if (!started) return env_name + " was never reset; call reset() before stepping";
    if (failed && autoreset == Autoreset::kDisabled)
      return env_name + " failed (an EnvError was raised) and autoreset is 'disabled'; call reset(env_ids=[...]) first";
    if (episode_over && autoreset == Autoreset::kDisabled)
      return env_name + "'s episode has ended and autoreset is 'disabled'; call reset(env_ids=[...]) first";
    return "";
  }

  // A step (step_requested) or a reset, written to `row`. A step of an env
  // that failed, or whose episode ended under next_step, resets it instead
  // (the action is ignored, as Gymnasium's next_step autoreset does). False
  // when the env threw: the row then holds a failure.
  bool run(bool step_requested, const Action& action, const Row& row, const EpisodeRules& rules) {
    StepOutput out(row.field[kObservation], rules.observation_dtype, row.extras.data(), rules.extra_bytes.data(),
                   rules.extra_bytes.size());
    try {
      if (!step_requested || resets_on_step(rules.autoreset)) {
        if (has_pending_seed) rng.reseed(pending_seed), has_pending_seed = false;
        env.reset(rng, out);
        started = true;
        failed = false;
        episode_over = false;
        episode_return = 0.0;
        episode_length = 0;
        write_flags(row, 0.0f, false, false);
      } else {
        const StepResult result = env.step(action, rng, out);
        episode_return += result.reward;
        episode_length += 1;
        const bool truncated =
            result.truncated || (rules.max_episode_steps > 0 && episode_length >= rules.max_episode_steps);
        write_flags(row, static_cast<float>(result.reward), result.terminated, truncated);
        if (result.terminated || truncated) {
          if (rules.autoreset == Autoreset::kSameStep) {
            std::memcpy(row.field[kFinalObservation], row.field[kObservation], rules.observation_bytes);
            // A named array: StepOutput keeps the pointer, so it must outlive the reset.
            const std::array<uint8_t*, kMaxExtras> scratch = scratch_extras(rules);
            StepOutput next(row.field[kObservation], rules.observation_dtype, scratch.data(), rules.extra_bytes.data(),
                            rules.extra_bytes.size());
            env.reset(rng, next);
            episode_return = 0.0;
            episode_length = 0;
            return true;
          }
          episode_over = true;
        }
      }
      if (rules.autoreset == Autoreset::kSameStep)
        std::memcpy(row.field[kFinalObservation], row.field[kObservation], rules.observation_bytes);
    } catch (const std::exception& error) {
      fail(row, rules, error.what());
      return false;
    } catch (...) {
      fail(row, rules, "unknown C++ exception");
      return false;
    }
    return true;
  }

  // State injection (parity tests): a family declares either a fixed
  // `static constexpr int kStateSize` or, when the size depends on its Model
  // (MuJoCo: nq + nv of the loaded XML), a `size_t state_size() const`.
  static constexpr bool kHasState = requires { Env::kStateSize; } || requires(const Env& e) { e.state_size(); };

  std::vector<double> state() const {
    if constexpr (kHasState) {
      std::vector<double> values(state_size());
      env.get_state(values.data());
      return values;
    } else {
      throw InputError("this env family does not support state injection");
    }
  }

  void set_state(const std::vector<double>& values) {
    if constexpr (kHasState) {
      if (values.size() != state_size())
        throw InputError("state must have " + std::to_string(state_size()) + " values");
      env.set_state(values.data());
    } else {
      throw InputError("this env family does not support state injection");
    }
  }

  // NOTE [Env failures]. An env that throws writes a row all the same, so
  // every row of its batch arrives and none is held back: observation (and
  // final_observation, extras) zeroed, reward 0, truncated and done set, the
  // episode's totals so far. The env is marked failed: its next step resets
  // it instead, or with autoreset disabled refuses until reset(). The message
  // waits in the slot for the caller, who reads it once the row's block is
  // complete.
  void fail(const Row& row, const EpisodeRules& rules, const std::string& what) {
    std::memset(row.field[kObservation], 0, rules.observation_bytes);
    if (rules.autoreset == Autoreset::kSameStep) std::memset(row.field[kFinalObservation], 0, rules.observation_bytes);
    for (size_t i = 0; i < rules.extra_bytes.size(); ++i) std::memset(row.extras[i], 0, rules.extra_bytes[i]);
    write_flags(row, 0.0f, false, true);
    failure = what;
    failed = true;
    started = true;
    episode_over = true;
  }

 private:
  void write_flags(const Row& row, float reward, bool terminated, bool truncated) const {
    row.at<float>(kReward) = reward;
    row.at<bool>(kTerminated) = terminated;
    row.at<bool>(kTruncated) = truncated;
    row.at<bool>(kDone) = terminated || truncated;
    row.at<float>(kEpisodeReturn) = static_cast<float>(episode_return);
    row.at<int64_t>(kEpisodeLength) = episode_length;
  }

  size_t state_size() const {
    if constexpr (requires { Env::kStateSize; })
      return static_cast<size_t>(Env::kStateSize);
    else
      return env.state_size();
  }

  std::array<uint8_t*, kMaxExtras> scratch_extras(const EpisodeRules& rules) {
    std::array<uint8_t*, kMaxExtras> extras{};
    uint8_t* cursor = extras_scratch.data();
    for (size_t i = 0; i < rules.extra_bytes.size(); ++i)
      extras[i] = cursor, cursor += EpisodeRules::aligned(rules.extra_bytes[i]);
    return extras;
  }
};

// The EnvFailure of the envs among `ids` whose slot holds a message; the
// messages are taken from the slots (NOTE [Env failures]).
template <class Slot>
EnvFailure take_failures(const std::vector<std::unique_ptr<Slot>>& slots, size_t block, const int64_t* ids,
                         size_t count) {
  std::vector<int64_t> failed;
  std::vector<std::string> messages;
  for (size_t i = 0; i < count; ++i) {
    Slot& slot = *slots[ids[i]];
    if (slot.failure.empty()) continue;
    failed.push_back(ids[i]);
    messages.push_back(std::move(slot.failure));
    slot.failure.clear();
  }
  return EnvFailure(block, count, std::move(failed), std::move(messages));
}

}  // namespace torchpool
