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

// The scalar output fields every step has, in column order. The columns of a
// step's output (output_fields) are: the observation's fields, these, the
// final observation's fields (same_step autoreset only), the family's extras.
enum Field : size_t {
  kReward = 0,
  kTerminated,
  kTruncated,
  kDone,
  kEnvId,
  kEpisodeReturn,
  kEpisodeLength,
  kScalarFields,
};

inline constexpr size_t kMaxObservationFields = 16;  // dog fetch has 11
inline constexpr size_t kMaxExtras = 16;

// The column name of observation field `field` under `key` ("observation" or
// "final_observation"): the key itself for one unnamed field, "key.name"
// otherwise (Python nests it as td[key, name]).
inline std::string observation_column(const std::string& key, const ObservationSpec& field) {
  return field.name.empty() ? key : key + "." + field.name;
}

// Where one env's row goes: each observation field, each scalar field, each
// final observation field (same_step autoreset only) and each of the family's
// extras. Only the fields the pool has are set (no zeroing: this is built per env step).
struct Row {
  std::array<uint8_t*, kMaxObservationFields> observation;
  std::array<uint8_t*, kMaxObservationFields> final_observation;
  std::array<uint8_t*, kScalarFields> field;
  std::array<uint8_t*, kMaxExtras> extras;

  template <class T>
  T& at(Field index) const {
    return *reinterpret_cast<T*>(field[index]);
  }
};

// The columns of a step's output, in order (see Field).
inline std::vector<FieldSpec> output_fields(const EnvSpec& spec, Autoreset autoreset) {
  std::vector<FieldSpec> fields;
  for (const ObservationSpec& obs : spec.observations)
    fields.push_back({observation_column("observation", obs), obs.dtype, obs.shape});
  const std::vector<FieldSpec> scalars = {
      {"reward", Dtype::Float32, {}},       {"terminated", Dtype::Bool, {}},
      {"truncated", Dtype::Bool, {}},       {"done", Dtype::Bool, {}},
      {"env_id", Dtype::Int64, {}},         {"episode_return", Dtype::Float32, {}},
      {"episode_length", Dtype::Int64, {}},
  };
  fields.insert(fields.end(), scalars.begin(), scalars.end());
  if (autoreset == Autoreset::kSameStep)
    for (const ObservationSpec& obs : spec.observations)
      fields.push_back({observation_column("final_observation", obs), obs.dtype, obs.shape});
  for (const FieldSpec& extra : spec.extras) fields.push_back(extra);
  return fields;
}

// What every env of a pool follows; built once.
struct EpisodeRules {
  Autoreset autoreset = Autoreset::kSameStep;
  int64_t max_episode_steps = 0;          // 0: no time limit
  std::vector<Dtype> observation_dtypes;  // per observation field
  std::vector<size_t> observation_bytes;  // row bytes of each observation field
  std::vector<size_t> extra_bytes;        // row bytes of each extra

  static EpisodeRules of(const EnvSpec& spec, Autoreset autoreset) {
    if (spec.observations.empty() || spec.observations.size() > kMaxObservationFields)
      throw std::logic_error("a family declares 1 to " + std::to_string(kMaxObservationFields) + " observation fields");
    for (const ObservationSpec& obs : spec.observations)
      if (obs.name.empty() != (spec.observations.size() == 1))
        throw std::logic_error("one observation field is unnamed; several are each named");
    EpisodeRules rules;
    rules.autoreset = autoreset;
    rules.max_episode_steps = spec.max_episode_steps;
    for (const ObservationSpec& obs : spec.observations) {
      rules.observation_dtypes.push_back(obs.dtype);
      rules.observation_bytes.push_back(obs.row_bytes());
    }
    for (const FieldSpec& extra : spec.extras) rules.extra_bytes.push_back(extra.row_bytes());
    return rules;
  }

  size_t observation_fields() const { return observation_bytes.size(); }
  bool keeps_final_observation() const { return autoreset == Autoreset::kSameStep; }
  // The column of a scalar field (output_fields' order).
  size_t column(Field field) const { return observation_fields() + field; }

  // Where row `index` of a block (laid out by output_fields) goes. Built per env step.
  Row row_at(const FieldTargets& targets, size_t index) const {
    Row row;
    const size_t observations = observation_fields();
    size_t column = 0;
    for (size_t i = 0; i < observations; ++i) row.observation[i] = targets.at(column++, index);
    for (size_t i = 0; i < kScalarFields; ++i) row.field[i] = targets.at(column++, index);
    if (keeps_final_observation())
      for (size_t i = 0; i < observations; ++i) row.final_observation[i] = targets.at(column++, index);
    for (size_t i = 0; i < extra_bytes.size(); ++i) row.extras[i] = targets.at(column++, index);
    return row;
  }

  // The observation fields of `row` copied into its final observation fields, or zeroed.
  void keep_final_observation(const Row& row) const {
    for (size_t i = 0; i < observation_fields(); ++i)
      std::memcpy(row.final_observation[i], row.observation[i], observation_bytes[i]);
  }
  void zero_observation(const Row& row) const {
    for (size_t i = 0; i < observation_fields(); ++i) {
      std::memset(row.observation[i], 0, observation_bytes[i]);
      if (keeps_final_observation()) std::memset(row.final_observation[i], 0, observation_bytes[i]);
    }
  }

  // The family's view of a row: its observation fields and extras (`extras`: the row's, or a scratch row's).
  StepOutput output(const Row& row, uint8_t* const* extras) const {
    return StepOutput(row.observation.data(), observation_dtypes.data(), observation_fields(), extras,
                      extra_bytes.data(), extra_bytes.size());
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

  EnvSlot(const typename Env::Model& model, size_t env_id, uint64_t seed, const EpisodeRules& rules)
      : env(make_env(model, env_id)), rng(seed), extras_scratch(rules.scratch_bytes()) {
    if constexpr (ReseedsEnv<Env>) env.reseed(seed);
  }

  // NOTE [Begun steps] (env.h): the step or reset that run() will make of
  // this action, begun now, as run() will decide it: the same reset-instead
  // rule, the pending seed applied here rather than there.
  void begin(bool step_requested, const Action& action, Autoreset autoreset) {
    if constexpr (BeginsSteps<Env>) {
      const bool resets = !step_requested || resets_on_step(autoreset);
      if (resets && has_pending_seed) apply_pending_seed();
      env.begin(resets, action);
    }
  }

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
    StepOutput out = rules.output(row, row.extras.data());
    try {
      if (!step_requested || resets_on_step(rules.autoreset)) {
        if (has_pending_seed) apply_pending_seed();
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
            rules.keep_final_observation(row);
            // A named array: StepOutput keeps the pointer, so it must outlive the reset.
            const std::array<uint8_t*, kMaxExtras> scratch = scratch_extras(rules);
            StepOutput next = rules.output(row, scratch.data());
            env.reset(rng, next);
            episode_return = 0.0;
            episode_length = 0;
            return true;
          }
          episode_over = true;
        }
      }
      if (rules.keeps_final_observation()) rules.keep_final_observation(row);
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

  static constexpr bool kRenders = RendersFrames<Env>;

  // The env's current screen, RGB, and its shape (RendersFrames).
  std::vector<int64_t> render(std::vector<uint8_t>& pixels) const {
    if constexpr (kRenders)
      return env.render(pixels);
    else
      throw InputError("this env family does not render");
  }

  // NOTE [Env failures]. An env that throws writes a row all the same, so
  // every row of its batch arrives and none is held back: observation (and
  // final_observation, extras) zeroed, reward 0, truncated and done set, the
  // episode's totals so far. The env is marked failed: its next step resets
  // it instead, or with autoreset disabled refuses until reset(). The message
  // waits in the slot for the caller, who reads it once the row's block is
  // complete.
  void fail(const Row& row, const EpisodeRules& rules, const std::string& what) {
    rules.zero_observation(row);
    for (size_t i = 0; i < rules.extra_bytes.size(); ++i) std::memset(row.extras[i], 0, rules.extra_bytes[i]);
    write_flags(row, 0.0f, false, true);
    failure = what;
    failed = true;
    started = true;
    episode_over = true;
  }

 private:
  static Env make_env(const typename Env::Model& model, size_t env_id) {
    if constexpr (std::constructible_from<Env, const typename Env::Model&, size_t>)
      return Env(model, env_id);
    else
      return Env(model);
  }

  void apply_pending_seed() {
    rng.reseed(pending_seed);
    if constexpr (ReseedsEnv<Env>) env.reseed(pending_seed);
    has_pending_seed = false;
  }

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
