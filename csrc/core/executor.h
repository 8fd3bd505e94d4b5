// executor.h — worker threads that run an Env family over the action queue.
//
// Data flow: the caller validates a send() and copies the actions into
// per-env slots, pushes work items, and returns. Workers (and the caller
// itself while it waits in step/recv/reset) claim items, step or reset each
// env in the item, and write every output field straight into a row of an
// output block. The caller then hands the block to Python as tensors.
//
// Guarantees (docs/design.md, "The rules the core keeps"):
// - an env is in at most one item at a time (the caller refuses a second
//   action for an env in flight), so one thread at a time touches it;
// - each env has its own Rng seeded from (seed + env_id), so results do not
//   depend on num_threads or on which thread ran the env;
// - an exception in an env is captured in that env's row and raised (as
//   EnvFailure) by the wait whose batch holds the row; it never crosses a
//   thread, and the env is reset before it steps again (NOTE [Env failures]);
// - the caller's bookkeeping (rows sent and received, envs in flight) lives
//   here, so each call is all-or-nothing even when Python raises
//   KeyboardInterrupt between two of its own statements;
// - a blocking call interrupted by Ctrl-C leaves no work behind (NOTE
//   [Interrupted calls]);
// - close() stops and joins workers even with work in flight.
#pragma once

#include <array>
#include <cmath>
#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <memory>
#include <stdexcept>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "action_queue.h"
#include "env.h"
#include "output_ring.h"
#include "split_tail.h"

namespace torchpool {

enum class Autoreset : int32_t { kSameStep = 0, kNextStep = 1, kDisabled = 2 };

struct ExecutorOptions {
  size_t num_envs = 1;
  size_t batch_size = 1;
  size_t num_blocks = 3;
  size_t num_threads = 1;
  int64_t thread_affinity_offset = -1;  // < 0: no pinning
  uint64_t seed = 0;
  Autoreset autoreset = Autoreset::kSameStep;
  Dtype obs_dtype = Dtype::Float32;
  int64_t max_episode_steps = -1;  // < 0: the family's default; 0: none
  SpinPolicy spin;
};

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

// Raised for bad input from Python; bindings map it to ValueError.
struct InputError : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// Called every few milliseconds while the caller sleeps; may throw (Ctrl-C).
using InterruptCheck = std::function<void()>;

// Envs that raised inside step or reset, raised by the call whose batch holds
// their rows. block: the ring block of that batch, or kResetBatch for reset().
struct EnvFailure : std::runtime_error {
  static constexpr size_t kResetBatch = static_cast<size_t>(-1);
  size_t block;
  size_t rows;  // rows of the batch
  std::vector<int64_t> env_ids;
  std::vector<std::string> messages;

  EnvFailure(size_t block_, size_t rows_, std::vector<int64_t> ids, std::vector<std::string> texts)
      : std::runtime_error(describe(ids, texts)),
        block(block_),
        rows(rows_),
        env_ids(std::move(ids)),
        messages(std::move(texts)) {}

  static std::string describe(const std::vector<int64_t>& ids, const std::vector<std::string>& texts) {
    std::string text;
    for (size_t i = 0; i < ids.size(); ++i)
      text += (i ? "\n" : "") + std::string("env ") + std::to_string(ids[i]) + ": " + texts[i];
    return text;
  }
};

// What the bindings see; the family type is erased here.
class ExecutorBase {
 public:
  virtual ~ExecutorBase() = default;
  virtual const EnvSpec& spec() const = 0;
  virtual const ExecutorOptions& options() const = 0;
  virtual const Layout& block_layout() const = 0;
  virtual const Layout& reset_layout() const = 0;
  virtual void set_block(size_t block, uint8_t* base) = 0;
  // Sync pools only: field i of env r's row at address[i] + r * row_stride[i].
  virtual void set_block_targets(size_t block, const FieldTargets& targets) = 0;
  virtual void set_reset_buffer(uint8_t* base) = 0;
  // ids == nullptr means every env, in order. Each call either throws
  // InputError before anything is queued or queues all `count` rows.
  virtual void send(const void* actions, Dtype dtype, const int64_t* ids, size_t count) = 0;
  virtual void async_reset(const int64_t* ids, size_t count) = 0;
  // Sync step: send() to every env (every env idle), copy the accepted actions
  // to `record` if not null, and wait; returns the block that holds the batch.
  virtual size_t step(const void* actions, Dtype dtype, void* record, const InterruptCheck& check) = 0;
  // Waits for the next batch_size rows in flight; returns their block.
  virtual size_t recv(const InterruptCheck& check) = 0;
  virtual void reset(const int64_t* ids, size_t count, const uint64_t* seeds, const InterruptCheck& check) = 0;
  // Python calls this when KeyboardInterrupt surfaced right after recv()
  // returned, before the batch reached the user: the batch becomes the next
  // recv()'s again. Only right after a recv(); false (nothing done) otherwise.
  virtual bool undo_recv() = 0;
  virtual uint64_t rows_sent() const = 0;
  virtual uint64_t rows_received() const = 0;
  // The ring block the next batch received lands in.
  virtual size_t next_block() const = 0;
  // In a child of fork(): the workers exist only in the parent, so they are
  // neither stopped nor joined; their handles are leaked.
  virtual void forget_threads() = 0;
  // Whether a push of `count` envs wakes the workers, so the envs step while
  // the caller does something else; if not, the caller steps them in step()/recv().
  virtual bool wakes_workers(size_t count) const = 0;
  // How many times a worker fell asleep (waited in the kernel for work) while
  // the caller was inside step()/recv(): the sleeps NOTE [Workers wait out
  // the caller's items] is about. Each costs the next push a wake-up.
  virtual int64_t worker_sleeps_in_calls() const = 0;
  virtual std::vector<double> get_state(size_t env_id) const = 0;
  virtual void set_state(size_t env_id, const std::vector<double>& state) = 0;
  virtual void close() = 0;
};

template <class Env>
class Executor final : public ExecutorBase {
  using Model = typename Env::Model;

 public:
  Executor(const Config& config, const ExecutorOptions& options)
      : options_(options),
        model_(config),
        spec_(make_spec(model_, options)),
        extras_begin_(options.autoreset == Autoreset::kSameStep ? kFinalObservation + 1 : kFinalObservation),
        block_layout_(fields(), options.batch_size),
        reset_layout_(fields(), options.num_envs),
        queue_(options.num_envs),
        caller_queue_(options.num_envs),
        ring_(options.num_blocks, options.batch_size),
        tail_(2 * options.num_threads),
        in_flight_(options.num_envs, 0),
        all_ids_(options.num_envs),
        discard_(new std::atomic<uint8_t>[options.num_envs]),
        block_failures_(new std::atomic<int32_t>[options.num_blocks]) {
    for (size_t id = 0; id < options.num_envs; ++id) discard_[id].store(0, std::memory_order_relaxed);
    for (size_t b = 0; b < options.num_blocks; ++b) block_failures_[b].store(0, std::memory_order_relaxed);
    if (spec_.extras.size() > kMaxExtras) throw std::logic_error("too many extra fields");
    build_slots();
    for (size_t id = 0; id < options.num_envs; ++id) all_ids_[id] = static_cast<int64_t>(id);
    action_size_ = spec_.action.element_count();
    action_index_.assign(options.num_envs, 0);
    action_values_.assign(spec_.action.discrete ? 0 : options.num_envs * action_size_, 0.0);
    envs_per_target_item_ = static_cast<size_t>(kItemTargetNs / std::max(spec_.step_cost_ns, 1.0));
    // NOTE [The caller as a worker]. In a sync pool (every env steps in every
    // call) of costly envs the calling thread would only sleep through each
    // step(): it takes one worker's place instead, so num_threads threads
    // still step envs and none waits idle for a wake-up. Async pools keep
    // every worker, so the envs step while the caller runs its policy,
    // unless a batch is so short (kShortBatchNs) that the caller would spend
    // its wait falling asleep and being woken. HalfCheetah-v5, 8 envs /
    // batch 4 on 2 cores (~50 us a batch), interleaved A/B in one process:
    // +26% steps/s with a bare loop (10 of 10), +43% with a 64x64 MLP policy
    // (10 of 10), -7% with a 3x1024 MLP (450 us a call, 9x the batch). Longer
    // batches gain nothing (Ant-v5 8 / 4, HalfCheetah-v5 64 / 32: +0-5%) and
    // lose with a heavy policy (Pong-v5 16 / 8 with a CNN: -23%).
    const double batch_ns = static_cast<double>(options.batch_size) * spec_.step_cost_ns /
                            static_cast<double>(std::max<size_t>(options.num_threads, 1));
    // A sync pool of one thread has no worker at all: its steps run in the
    // caller, and send() only queues them until recv() (Pong-v5, 1 env: 70%
    // -> 90% of one thread's bare emulation, 4 envs: 83% -> 91%). An async
    // pool keeps a worker, so its envs step while the caller is away. Steps
    // over kCallerLongestStepNs stay off the caller: Ctrl-C waits for a step
    // the caller is in.
    const bool sync = options.batch_size == options.num_envs;
    caller_is_worker_ = spec_.step_cost_ns > kCallerMaxStepNs && spec_.step_cost_ns <= kCallerLongestStepNs &&
                        (sync || (options.num_threads >= 2 && batch_ns <= kShortBatchNs));
    if constexpr (kCanSplit)
      if (caller_is_worker_ && sync && options.num_threads >= 2) substeps_ = slots_[0]->env.substeps();
    for (size_t i = 0; i < options.num_threads - (caller_is_worker_ ? 1 : 0); ++i) {
      workers_.emplace_back([this, i] { work(static_cast<int32_t>(i) + 1); });
      pin(workers_.back(), i);
#if defined(__linux__)
      pthread_setname_np(workers_.back().native_handle(), "torchpool");  // shows in top -H, py-spy, gdb
#endif
    }
  }

  ~Executor() override { close(); }

  int64_t worker_sleeps_in_calls() const override { return worker_sleeps_in_calls_.load(std::memory_order_relaxed); }

  const EnvSpec& spec() const override { return spec_; }
  const ExecutorOptions& options() const override { return options_; }
  const Layout& block_layout() const override { return block_layout_; }
  const Layout& reset_layout() const override { return reset_layout_; }
  void set_block(size_t block, uint8_t* base) override { ring_.set_targets(block, block_layout_.targets(base)); }
  void set_block_targets(size_t block, const FieldTargets& targets) override { ring_.set_targets(block, targets); }
  void set_reset_buffer(uint8_t* base) override { reset_targets_ = reset_layout_.targets(base); }

  void send(const void* actions, Dtype dtype, const int64_t* ids, size_t count) override {
    settle(nullptr);
    if (ids == nullptr) ids = all_ids_.data();
    check_ids(ids, count, /*for_step=*/true);
    copy_actions(actions, dtype, ids, count);
    push(Op::kStep, ids, count, 0);
    rows_sent_ += count;
  }

  void async_reset(const int64_t* ids, size_t count) override {
    settle(nullptr);
    if (ids == nullptr) ids = all_ids_.data();
    check_ids(ids, count, /*for_step=*/false);
    push(Op::kReset, ids, count, 0);
    rows_sent_ += count;
  }

  size_t step(const void* actions, Dtype dtype, void* record, const InterruptCheck& check) override {
    settle(check);
    if (rows_sent_ != rows_received_)
      throw std::runtime_error("step() needs every env idle, but some are in flight; recv() them first");
    const size_t count = options_.num_envs;
    check_ids(all_ids_.data(), count, /*for_step=*/true);
    copy_actions(actions, dtype, all_ids_.data(), count);
    if (record != nullptr) std::memcpy(record, actions, count * action_size_ * dtype_size(dtype));
    const size_t block = next_block();
    push(Op::kStep, all_ids_.data(), count, 0);
    rows_sent_ += count;
    wait_or_discard(Abandoned::kBlock, block, all_ids_.data(), count, check);
    finish_block(block);
    return block;
  }

  size_t recv(const InterruptCheck& check) override {
    settle(check);
    const uint64_t pending = rows_sent_ - rows_received_;
    if (pending < options_.batch_size)
      throw std::runtime_error("recv() needs batch_size=" + std::to_string(options_.batch_size) +
                               " envs in flight, but " + std::to_string(pending) +
                               " are; send() actions (or async_reset()) first");
    const size_t block = next_block();
    // An interrupt here changes nothing: the rows stay in flight for the next recv().
    wait_until(ring_.filled(block), ring_.target(), check);
    // Undoable from here on: Python builds an EnvFailure's exception in Python
    // code, where KeyboardInterrupt can replace it after the batch was taken.
    undoable_block_ = static_cast<int64_t>(block);
    finish_block(block);
    return block;
  }

  bool undo_recv() override {
    if (undoable_block_ < 0) return false;
    const auto block = static_cast<size_t>(std::exchange(undoable_block_, -1));
    rows_received_ -= options_.batch_size;
    ring_.filled(block).restore(ring_.target());
    if (!undo_failures_.env_ids.empty()) {  // the failures it raised are raised again
      block_failures_[block].store(static_cast<int32_t>(undo_failures_.env_ids.size()), std::memory_order_relaxed);
      for (size_t i = 0; i < undo_failures_.env_ids.size(); ++i)
        slots_[undo_failures_.env_ids[i]]->failure = undo_failures_.messages[i];
    }
    mark_block_envs(block, 1);
    return true;
  }

  void reset(const int64_t* ids, size_t count, const uint64_t* seeds, const InterruptCheck& check) override {
    settle(check);
    if (ids == nullptr) ids = all_ids_.data();
    check_ids(ids, count, /*for_step=*/false);
    if (seeds != nullptr)
      for (size_t i = 0; i < count; ++i)
        slots_[ids[i]]->pending_seed = seeds[i], slots_[ids[i]]->has_pending_seed = true;
    reset_target_ = static_cast<int32_t>(count);
    push(Op::kResetInto, ids, count, 0);
    wait_or_discard(Abandoned::kReset, 0, ids, count, check);
    reset_filled_.clear();
    for (size_t i = 0; i < count; ++i) in_flight_[ids[i]] = 0;
    if (reset_failures_.exchange(0, std::memory_order_relaxed) > 0) throw_failures(EnvFailure::kResetBatch, ids, count);
  }

  uint64_t rows_sent() const override { return rows_sent_; }
  uint64_t rows_received() const override { return rows_received_; }
  size_t next_block() const override { return (rows_received_ / options_.batch_size) % ring_.num_blocks(); }

  void forget_threads() override {
    stopping_.store(true);
    // Leaked on purpose: destroying a joinable std::thread terminates, and joining one that does not exist here hangs.
    (void)std::make_unique<std::vector<std::thread>>(std::move(workers_)).release();
    workers_.clear();
  }

  // State injection (parity tests): a family declares either a fixed
  // `static constexpr int kStateSize` or, when the size depends on its Model
  // (MuJoCo: nq + nv of the loaded XML), a `size_t state_size() const`.
  std::vector<double> get_state(size_t env_id) const override {
    if constexpr (kHasState) {
      check_state_access(env_id);
      const Env& env = slots_[env_id]->env;
      std::vector<double> state(state_size(env));
      env.get_state(state.data());
      return state;
    } else {
      throw InputError("this env family does not support state injection");
    }
  }

  void set_state(size_t env_id, const std::vector<double>& state) override {
    if constexpr (kHasState) {
      check_state_access(env_id);
      Env& env = slots_[env_id]->env;
      if (state.size() != state_size(env))
        throw InputError("state must have " + std::to_string(state_size(env)) + " values");
      env.set_state(state.data());
    } else {
      throw InputError("this env family does not support state injection");
    }
  }

  void close() override {
    if (stopping_.exchange(true)) return;
    queue_.available().release(static_cast<int32_t>(workers_.size()));
    for (std::thread& worker : workers_) worker.join();
  }

 private:
  // NOTE [Split tail]: a family whose step is a run of substeps begins them one at a time with advance().
  static constexpr bool kCanSplit = requires(Env& env, const Action& action) {
    env.advance(action);
    env.substeps();
  };
  static constexpr bool kHasState = requires { Env::kStateSize; } || requires(const Env& env) { env.state_size(); };
  static size_t state_size(const Env& env) {
    if constexpr (requires { Env::kStateSize; })
      return static_cast<size_t>(Env::kStateSize);
    else
      return env.state_size();
  }

  static constexpr size_t kMaxExtras = 16;
  // A work item should take about this long, so cheap envs run as tight loops.
  static constexpr double kItemTargetNs = 20000.0;
  // NOTE [Costly envs]: envs above this go one per work item, wake the
  // workers, and in sync pools have the caller step them as a worker. The
  // line sits between classic control (<= 0.4 us a step) and the cheapest
  // MuJoCo tasks (~10 us). It was 20 us, which put InvertedPendulum, Reacher
  // and HalfCheetah (whose cost is timed from qpos0 at ~16 us, ~28 us in
  // episodes) on the cheap path: two big items, one of them left to a worker
  // woken late. Sync, 8 envs on 2 cores, interleaved in one process: 1.19x
  // (InvertedPendulum), 1.30x (Reacher), 1.27x (HalfCheetah; 1.07x at 64).
  static constexpr double kCallerMaxStepNs = 5e3;
  static constexpr double kWakeWorthNs = 30000.0;
  static constexpr double kCallerLongestStepNs = 10e6;
  // An async batch this short (its envs' steps over num_threads) makes the
  // caller a worker (NOTE [The caller as a worker]).
  static constexpr double kShortBatchNs = 150e3;

  // Costly envs can be costly to build too (an ALE instance precomputes its
  // colour tables: ~0.15 s), so they are built on num_threads threads at once;
  // the first construction error is rethrown here.
  void build_slots() {
    const size_t n = options_.num_envs;
    slots_.resize(n);
    auto build = [this](size_t id) {
      slots_[id] = std::make_unique<Slot>(model_, options_.seed + id, extras_row_bytes());
    };
    const size_t threads = std::min(options_.num_threads, n);
    if (threads < 2 || spec_.step_cost_ns <= kCallerMaxStepNs) {
      for (size_t id = 0; id < n; ++id) build(id);
      return;
    }
    std::vector<std::exception_ptr> errors(threads);
    std::vector<std::thread> builders;
    for (size_t t = 0; t < threads; ++t)
      builders.emplace_back([&, t] {
        try {
          for (size_t id = t; id < n; id += threads) build(id);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    for (auto& builder : builders) builder.join();
    for (auto& error : errors)
      if (error) std::rethrow_exception(error);
  }

  struct Slot {
    Env env;
    Rng rng;
    double episode_return = 0.0;
    int64_t episode_length = 0;
    // Written by the worker that ran the env, read by the caller only after it
    // received that env's row (acquire on the FillCounter), so plain fields.
    bool started = false;       // reset at least once
    bool episode_over = false;  // next_step/disabled: the last step ended the episode
    uint64_t pending_seed = 0;  // caller-written before the push that uses it
    bool has_pending_seed = false;
    bool failed = false;                  // NOTE [Env failures]: reset before the next step
    std::string failure;                  // the message, until the caller takes it
    std::vector<uint8_t> extras_scratch;  // same_step: extras of the autoreset land here

    Slot(const Model& model, uint64_t seed, size_t extras_bytes)
        : env(model), rng(seed), extras_scratch(std::max<size_t>(extras_bytes, 1)) {}
  };

  static EnvSpec make_spec(const Model& model, const ExecutorOptions& options) {
    EnvSpec spec = model.spec(options.obs_dtype);
    if (options.max_episode_steps >= 0) spec.max_episode_steps = options.max_episode_steps;
    return spec;
  }

  std::vector<FieldSpec> fields() const {
    const ObservationSpec& obs = spec_.observation;
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
    if (options_.autoreset == Autoreset::kSameStep) fields.push_back({"final_observation", obs.dtype, obs.shape});
    for (const FieldSpec& extra : spec_.extras) fields.push_back(extra);
    return fields;
  }

  // Each extra gets an 8-byte-aligned place in the scratch row, so any dtype
  // may follow any other (a bool then a float64).
  static size_t scratch_bytes(const FieldSpec& extra) { return (extra.row_bytes() + 7) / 8 * 8; }

  size_t extras_row_bytes() const {
    size_t bytes = 0;
    for (const FieldSpec& extra : spec_.extras) bytes += scratch_bytes(extra);
    return bytes;
  }

  // Envs per work item for a push of `count`: at least kItemTargetNs of work
  // per item (cheap envs run as one tight loop, no thread wakes), and no
  // fewer items than threads when each would still be that big. Costly envs
  // (NOTE [Costly envs]) go one per item, for load balance.
  size_t chunk_size(size_t count) const {
    if (spec_.step_cost_ns > kCallerMaxStepNs) return 1;  // also every env over kItemTargetNs
    const size_t threads = std::max<size_t>(options_.num_threads, 1);
    const size_t even_split = (count + threads - 1) / threads;
    return std::max<size_t>(1, std::min(std::max(envs_per_target_item_, even_split), count));
  }

  // ---- caller side -------------------------------------------------------

  void check_ids(const int64_t* ids, size_t count, bool for_step) {
    if (count == 0) throw InputError("no env ids given");
    const auto num_envs = static_cast<int64_t>(options_.num_envs);
    for (size_t i = 0; i < count; ++i) {
      const int64_t id = ids[i];
      if (id < 0 || id >= num_envs)
        throw InputError("env id " + std::to_string(id) + " is out of range [0, " + std::to_string(num_envs) + ")");
      if (in_flight_[id])
        throw InputError("env " + std::to_string(id) + " already has an action in flight; recv() its result first");
    }
    // Duplicates: mark each id, then clear every mark before reporting.
    std::string problem;
    for (size_t i = 0; i < count; ++i) {
      if (in_flight_[ids[i]] && problem.empty())
        problem = "env id " + std::to_string(ids[i]) + " appears twice in one call";
      in_flight_[ids[i]] = 1;
    }
    for (size_t i = 0; i < count; ++i) in_flight_[ids[i]] = 0;
    for (size_t i = 0; i < count && problem.empty() && for_step; ++i) {
      const Slot& slot = *slots_[ids[i]];
      if (!slot.started)
        problem = "env " + std::to_string(ids[i]) + " was never reset; call reset() before stepping";
      else if (slot.failed && options_.autoreset == Autoreset::kDisabled)
        problem = "env " + std::to_string(ids[i]) +
                  " failed (an EnvError was raised) and autoreset is 'disabled'; call reset(env_ids=[...]) first";
      else if (slot.episode_over && options_.autoreset == Autoreset::kDisabled)
        problem = "env " + std::to_string(ids[i]) +
                  "'s episode has ended and autoreset is 'disabled'; call reset(env_ids=[...]) first";
    }
    if (!problem.empty()) throw InputError(problem);
  }

  // Integers print as integers; a float action (1.5) keeps its fraction.
  template <class T>
  static std::string format_action(T value) {
    const double as_double = static_cast<double>(value);
    if (std::isfinite(as_double) && as_double == std::trunc(as_double) && std::abs(as_double) < 1e15)
      return std::to_string(static_cast<int64_t>(as_double));
    std::ostringstream text;
    text << as_double;
    return text.str();
  }

  template <class T>
  void copy_typed_actions(const T* actions, const int64_t* ids, size_t count) {
    if (spec_.action.discrete) {
      const int64_t n = spec_.action.num_actions;
      for (size_t i = 0; i < count; ++i) {
        const T value = actions[i];
        if (!(value >= 0 && static_cast<double>(value) < static_cast<double>(n)) ||
            static_cast<double>(static_cast<int64_t>(value)) != static_cast<double>(value))
          throw InputError("action " + format_action(value) + " for env " + std::to_string(ids[i]) +
                           " is not a valid index in [0, " + std::to_string(n) + ")");
      }
      for (size_t i = 0; i < count; ++i) action_index_[ids[i]] = static_cast<int64_t>(actions[i]);
    } else {
      for (size_t i = 0; i < count * action_size_; ++i)
        if (!std::isfinite(static_cast<double>(actions[i])))
          throw InputError("action for env " + std::to_string(ids[i / action_size_]) + " is not finite");
      for (size_t i = 0; i < count; ++i)
        for (size_t k = 0; k < action_size_; ++k)
          action_values_[ids[i] * action_size_ + k] = static_cast<double>(actions[i * action_size_ + k]);
    }
  }

  void copy_actions(const void* actions, Dtype dtype, const int64_t* ids, size_t count) {
    switch (dtype) {
      case Dtype::UInt8:
        return copy_typed_actions(static_cast<const uint8_t*>(actions), ids, count);
      case Dtype::Int32:
        return copy_typed_actions(static_cast<const int32_t*>(actions), ids, count);
      case Dtype::Int64:
        return copy_typed_actions(static_cast<const int64_t*>(actions), ids, count);
      case Dtype::Float32:
        return copy_typed_actions(static_cast<const float*>(actions), ids, count);
      case Dtype::Float64:
        return copy_typed_actions(static_cast<const double*>(actions), ids, count);
      default:
        throw InputError("unsupported action dtype");
    }
  }

  void push(Op op, const int64_t* ids, size_t count, uint32_t position) {
    if (stopping_.load(std::memory_order_relaxed)) throw InputError("the pool is closed");
    push_ids_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      push_ids_[i] = static_cast<int32_t>(ids[i]);
      in_flight_[ids[i]] = 1;
    }
    // NOTE [The caller's own envs]. In a sync step where the caller is a
    // worker, the first count / num_threads envs go to the caller's own queue,
    // so each env steps on the same core call after call and its state stays
    // in that core's cache; workers take the shared queue and then steal from
    // the caller's, so a late caller (or one away while send() steps in the
    // background) loses no balance. From one shared queue an env's state
    // moved between cores at random. Sync, 8 envs on 2 cores, interleaved
    // A/B in one process (24 pairs): HalfCheetah-v5 +2% (18 faster),
    // Humanoid-v5 +2% (14), Pong-v5 and Ant-v5 +0%.
    const uint32_t chunk = static_cast<uint32_t>(chunk_size(count));
    if (caller_is_worker_ && op == Op::kStep && count == options_.num_envs) {
      const size_t held = split_tail_size(count);
      const size_t queued = count - held;
      if (held > 0) tail_.arm(push_ids_.data() + queued, held, substeps_, options_.num_threads);
      const size_t own = queued / std::max<size_t>(options_.num_threads, 1);
      caller_queue_.push(op, push_ids_.data(), static_cast<uint32_t>(own), chunk, position, /*wake=*/false);
      if (own < queued)
        queue_.push(op, push_ids_.data() + own, static_cast<uint32_t>(queued - own), chunk,
                    position + static_cast<uint32_t>(own), wakes_workers(queued - own));
      return;
    }
    queue_.push(op, push_ids_.data(), static_cast<uint32_t>(count), chunk, position, wakes_workers(count));
  }

  // How many of a sync step's envs (the last ones) go to the split tail
  // (NOTE [Split tail]): two per thread, leaving at least one queued env per
  // thread so the push still wakes the workers; none where the family cannot
  // split its steps, or when one of them would reset instead of stepping.
  size_t split_tail_size(size_t count) const {
    if (substeps_ < 2) return 0;
    const size_t threads = options_.num_threads;
    if (count < 2 * threads) return 0;
    const size_t held = std::min(2 * threads, count - threads);
    for (size_t i = count - held; i < count; ++i) {
      const Slot& slot = *slots_[push_ids_[i]];
      if (slot.failed || (options_.autoreset == Autoreset::kNextStep && slot.episode_over)) return 0;
    }
    return held;
  }

  // Any thread: one piece of the split tail, if one is free. The holder of an
  // env's last substep runs its step, which writes the row.
  // `self`: 0 for the caller, 1 + i for worker i.
  bool run_tail_piece(int32_t self) {
    if constexpr (!kCanSplit) {
      return false;
    } else {
      if (substeps_ < 2) return false;
      const SplitTail::Piece piece = tail_.take(self);
      if (piece.entry < 0) return false;
      // The entry is finished before the row is counted: once every row is in,
      // the caller may arm the entries again for its next step.
      if (piece.last) {
        tail_.finish(piece);
        WorkItem item;
        item.first_env = piece.env;
        item.count = 1;
        run(item, queue_, /*may_discard=*/false);
        return true;
      }
      try {
        slots_[piece.env]->env.advance(action_for(piece.env));
        tail_.put_back(piece);
      } catch (const std::exception& error) {
        tail_.finish(piece);
        fail_tail_row(piece.env, error.what());
      }
      return true;
    }
  }

  bool tail_has_work() const { return substeps_ >= 2 && tail_.has_work(); }

  // The row of a split-tail env whose substep threw (sync pools: row = env id).
  void fail_tail_row(int32_t env_id, const std::string& what) {
    const size_t block = ring_.block_of(ring_.claim_rows(1));
    const FieldTargets& targets = ring_.targets(block);
    const size_t row = static_cast<size_t>(env_id);
    auto field = [&](size_t index) { return targets.at(index, row); };
    const std::array<uint8_t*, kMaxExtras> extras = extras_at(targets, row);
    *reinterpret_cast<int64_t*>(field(kEnvId)) = env_id;
    fail_row(*slots_[env_id], field, extras.data(), what);
    publish(block, 1, 1);
  }

  // Acquires one item's unit for a worker (shared queue first) or the caller
  // (its own first): the queue to claim() it from, or nullptr when both are empty.
  ActionQueue* try_acquire_item(bool caller) {
    ActionQueue* first = caller ? &caller_queue_ : &queue_;
    ActionQueue* second = caller ? &queue_ : &caller_queue_;
    if (first->available().try_acquire()) return first;
    if (second->available().try_acquire()) return second;
    return nullptr;
  }

  // On VMs a wake-up (an inter-processor interrupt) costs tens of µs: items
  // cheaper than that are left to spinning workers or to the caller, which
  // runs them while it waits (only envs cheap enough for the caller qualify).
  bool wakes_workers(size_t count) const override {
    return static_cast<double>(chunk_size(count)) * spec_.step_cost_ns >= kWakeWorthNs ||
           spec_.step_cost_ns > kCallerMaxStepNs;
  }

  // The caller runs queued items itself while it waits: for cheap envs that
  // avoids waking a worker at all. Not for envs slower than kCallerMaxStepNs:
  // there a wake-up is cheap next to the work, and a third runnable thread
  // beside num_threads workers only fights them for the cores (measured on
  // MuJoCo, benchmarks/mujoco_tasks.py); it would also delay Ctrl-C. The
  // exception is a pool where the caller replaces a worker (NOTE [The caller
  // as a worker]): measured +7% steps/s on Pong, Ant and HalfCheetah, sync
  // at 8 envs on 2 cores (alternating A/B runs, 11 of 15 pairs faster).
  void wait_until(FillCounter& counter, int32_t target, const InterruptCheck& check) {
    // Released on every exit, exceptions (Ctrl-C) included.
    struct Waiting {
      std::atomic<bool>& flag;
      explicit Waiting(std::atomic<bool>& f) : flag(f) { flag.store(true, std::memory_order_relaxed); }
      ~Waiting() { flag.store(false, std::memory_order_relaxed); }
    } waiting(caller_waiting_);
    const bool caller_runs_items = spec_.step_cost_ns <= kCallerMaxStepNs || caller_is_worker_;
    // A caller that only waits (async pools of costly envs with long batches) sleeps at once:
    // spinning, it would be a third runnable thread beside the workers and
    // take their cores. Alternating A/B runs, 8 envs / batch 4 on 2 cores:
    // median 44k vs 25k steps/s on HalfCheetah-v5, 8.5k vs 6.6k on Ant-v5.
    const int32_t spin_polls = caller_runs_items ? options_.spin.polls : 0;
    int32_t polls = 0;
    bool spun_for_last_items = false;
    while (!counter.reached(target)) {
      ActionQueue* from = caller_runs_items ? try_acquire_item(/*caller=*/true) : nullptr;
      if (from != nullptr) {
        run(from->claim(), *from);
        polls = 0;
        continue;
      }
      if (caller_is_worker_ && run_tail_piece(/*self=*/0)) {
        polls = 0;
        continue;
      }
      if (++polls < spin_polls) {
        TORCHPOOL_PAUSE();
        continue;
      }
      if (caller_is_worker_ && !spun_for_last_items) {
        // A tail env put back meanwhile sends the caller round again, free to spin once more.
        spun_for_last_items = !spin_for_last_items(counter, target);
        continue;
      }
      counter.sleep(target, 20000);
      if (check) check();
    }
  }

  // NOTE [The caller waits out the last items]. In a pool where the caller
  // is a worker, the queue is empty once it gets here: what remains is at
  // most one env step on each other worker, all on cores of their own.
  // Sleeping now would add a wake-up (tens of µs on a VM) to every step()
  // call; spinning through one env step costs nothing, since no other work
  // could use this core. Sync, 8 envs on 2 cores, interleaved A/B runs in one
  // process: HalfCheetah-v5 +15% (20 of 20 pairs), Pong-v5 and Humanoid-v5
  // +4%, Ant-v5 +2%. Bounded, so a stuck env still lets the caller sleep (Ctrl-C).
  // True when it stopped for a piece of the split tail to take.
  bool spin_for_last_items(FillCounter& counter, int32_t target) const {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::nanoseconds(static_cast<int64_t>(std::min(2.0 * spec_.step_cost_ns, 5e6)));
    while (!counter.reached(target)) {
      for (int i = 0; i < 64; ++i) TORCHPOOL_PAUSE();
      if (tail_has_work()) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
    }
    return false;
  }

  // NOTE [Interrupted calls]. Ctrl-C reaches a waiting caller as an exception
  // from `check`. An async recv() just lets it through: its rows stay in
  // flight for the next recv(). A sync step() or a reset() must not leave its
  // work behind (the user would have to drain it, and the next call would
  // find envs in flight), so its envs are marked discarded: whoever claims
  // one of them next counts its row without running it, and the caller waits
  // only for the envs already running (at most one env step per thread)
  // before it rethrows. The batch is dropped; envs that had already stepped
  // keep their new state. A second Ctrl-C during that short wait leaves the
  // call `abandoned_`, and the next call settles it first.
  void wait_or_discard(int kind, size_t block, const int64_t* ids, size_t count, const InterruptCheck& check) {
    FillCounter& counter = kind == Abandoned::kBlock ? ring_.filled(block) : reset_filled_;
    const int32_t target = kind == Abandoned::kBlock ? ring_.target() : reset_target_;
    try {
      wait_until(counter, target, check);
    } catch (...) {
      abandoned_.kind = kind;
      abandoned_.block = block;
      abandoned_.ids.assign(ids, ids + count);
      for (size_t i = 0; i < count; ++i) discard_[ids[i]].store(1, std::memory_order_relaxed);
      settle(check);
      throw;
    }
  }

  // Finishes an interrupted call (NOTE [Interrupted calls]) before any other.
  void settle(const InterruptCheck& check) {
    undoable_block_ = -1;
    undo_failures_.env_ids.clear();
    if (abandoned_.kind == Abandoned::kNone) return;
    const bool block_kind = abandoned_.kind == Abandoned::kBlock;
    FillCounter& counter = block_kind ? ring_.filled(abandoned_.block) : reset_filled_;
    wait_until(counter, block_kind ? ring_.target() : reset_target_, check);  // may throw again: still abandoned
    counter.clear();
    for (const int64_t id : abandoned_.ids) {
      discard_[id].store(0, std::memory_order_relaxed);
      in_flight_[id] = 0;
      slots_[id]->failure.clear();           // the failed env is still reset before it steps again
      slots_[id]->has_pending_seed = false;  // an interrupted reset(seed=...) leaves no seed behind
    }
    if (block_kind) {
      block_failures_[abandoned_.block].store(0, std::memory_order_relaxed);
      rows_received_ += options_.batch_size;
    } else {
      reset_failures_.store(0, std::memory_order_relaxed);
    }
    abandoned_.kind = Abandoned::kNone;
  }

  // The caller's side of a complete block: its envs are idle again, it counts
  // as received, and the failures among its rows are raised.
  void finish_block(size_t block) {
    mark_block_envs(block, 0);
    ring_.filled(block).clear();
    rows_received_ += options_.batch_size;
    // The rows' failures were counted before the rows themselves (FillCounter's acquire).
    if (block_failures_[block].exchange(0, std::memory_order_relaxed) == 0) return;
    if (options_.batch_size == options_.num_envs) {
      throw_failures(block, all_ids_.data(), options_.num_envs);
    } else {
      const FieldTargets& targets = ring_.targets(block);
      std::vector<int64_t> ids(options_.batch_size);
      for (size_t row = 0; row < options_.batch_size; ++row)
        ids[row] = *reinterpret_cast<const int64_t*>(targets.at(kEnvId, row));
      throw_failures(block, ids.data(), ids.size());
    }
  }

  // Marks the envs whose rows a complete block holds as in flight (1) or idle (0).
  void mark_block_envs(size_t block, uint8_t value) {
    if (options_.batch_size == options_.num_envs) {
      // Every env is in the block. Not read back from the env_id column: a
      // caller's targets may alias it, and an id read from it indexes memory.
      std::fill(in_flight_.begin(), in_flight_.end(), value);
      return;
    }
    const FieldTargets& targets = ring_.targets(block);
    for (size_t row = 0; row < options_.batch_size; ++row)
      in_flight_[*reinterpret_cast<const int64_t*>(targets.at(kEnvId, row))] = value;
  }

  // Throws EnvFailure for the envs among `ids` whose row holds a failure.
  [[noreturn]] void throw_failures(size_t block, const int64_t* ids, size_t count) {
    std::vector<int64_t> failed;
    std::vector<std::string> messages;
    for (size_t i = 0; i < count; ++i) {
      Slot& slot = *slots_[ids[i]];
      if (slot.failure.empty()) continue;
      failed.push_back(ids[i]);
      messages.push_back(std::move(slot.failure));
      slot.failure.clear();
    }
    undo_failures_.env_ids = failed;  // kept for undo_recv()
    undo_failures_.messages = messages;
    throw EnvFailure(block, count, std::move(failed), std::move(messages));
  }

  void check_state_access(size_t env_id) const {
    if (env_id >= options_.num_envs) throw InputError("env id " + std::to_string(env_id) + " is out of range");
    if (in_flight_[env_id]) throw InputError("env " + std::to_string(env_id) + " is in flight");
  }

  // ---- worker side -------------------------------------------------------

  // Pinned by the constructor (not by the thread itself) so the affinity holds
  // before the worker runs anything.
  void pin(std::thread& worker, size_t index) {
#if defined(__linux__)
    if (options_.thread_affinity_offset < 0) return;
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    const size_t cores = std::max(1u, std::thread::hardware_concurrency());
    CPU_SET((options_.thread_affinity_offset + index) % cores, &cpus);
    pthread_setaffinity_np(worker.native_handle(), sizeof(cpus), &cpus);
#else
    (void)worker, (void)index;
#endif
  }

  // Spins polling both queues (stealing the caller's envs once the shared
  // queue is empty, NOTE [The caller's own envs]), then sleeps on the shared
  // one. close() wakes sleepers with units that carry no item: check stopping
  // before claiming.
  void work(int32_t self) {
    auto stopping = [this] { return stopping_.load(std::memory_order_relaxed); };
    const SpinPolicy no_spin{0};
    while (true) {
      ActionQueue* from = nullptr;
      for (int32_t i = 0; i < options_.spin.polls; ++i) {
        if ((from = try_acquire_item(/*caller=*/false)) != nullptr) break;
        if (run_tail_piece(self))
          i = 0;
        else
          TORCHPOOL_PAUSE();
      }
      // Spin again for the caller's next call, or for an item queued meanwhile.
      if (from == nullptr && caller_is_worker_ && waited_out_caller()) continue;
      if (from == nullptr) {
        if (caller_waiting_.load(std::memory_order_relaxed))
          worker_sleeps_in_calls_.fetch_add(1, std::memory_order_relaxed);
        if (!queue_.available().acquire(no_spin, stopping)) return;
        from = &queue_;
      }
      if (stopping()) return;
      run(from->claim(), *from);
    }
  }

  // NOTE [Workers wait out the caller's items]. In a pool where the caller
  // is a worker, a worker that runs out of items while the caller is still
  // inside step()/recv() waits for the caller's own items to end; the spin
  // above (~30 us) is shorter than one of them (Humanoid-v5: ~200 us), so it
  // would fall asleep and the caller's next call would pay a wake-up. Its
  // core has nothing else to run meanwhile: the caller is in the pool, not in
  // user code. Sync, 8 envs on 2 cores, interleaved A/B in one process:
  // Humanoid-v5 +6% (12 of 16 pairs), HalfCheetah-v5 +2%, Pong-v5 and Ant-v5
  // +0%; a probe pool's worker slept in 32-43 of 100 steps, now in 0-1.
  // Bounded, so a stuck env still lets it sleep.
  // True once the caller has left or an item is queued; false when the
  // caller was not in the pool, or on the bound or close().
  bool waited_out_caller() {
    if (!caller_waiting_.load(std::memory_order_relaxed)) return false;
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::nanoseconds(static_cast<int64_t>(std::min(4.0 * spec_.step_cost_ns, 5e6)));
    while (caller_waiting_.load(std::memory_order_relaxed)) {
      for (int i = 0; i < 16; ++i) {
        if (queue_.available().has_units() || caller_queue_.available().has_units()) return true;
        if (tail_has_work()) return true;
        TORCHPOOL_PAUSE();
      }
      if (stopping_.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() > deadline) return false;
    }
    return true;
  }

  // `may_discard`: false for the last piece of a split-tail env, whose other
  // substeps already ran (the step must end, or the env stays mid-step).
  void run(const WorkItem& item, const ActionQueue& queue, bool may_discard = true) {
    int32_t env_id = item.first_env;
    if (item.op == Op::kResetInto) {
      int32_t failures = 0;
      for (uint32_t i = 0; i < item.count; ++i) {
        const int32_t following = i + 1 < item.count ? queue.next_env(env_id) : -1;  // before the step
        if (!discarded(env_id)) failures += run_env(env_id, Op::kResetInto, reset_targets_, item.position + i) ? 0 : 1;
        env_id = following;
      }
      if (failures > 0) reset_failures_.fetch_add(failures, std::memory_order_relaxed);  // published by add()
      reset_filled_.add(static_cast<int32_t>(item.count), reset_target_);
      return;
    }
    const uint64_t first_row = ring_.claim_rows(item.count);
    size_t block = ring_.block_of(first_row);
    int32_t rows_in_block = 0, failures = 0;
    const bool rows_by_env_id = options_.batch_size == options_.num_envs;
    for (uint32_t i = 0; i < item.count; ++i) {
      const uint64_t row_number = first_row + i;
      if (ring_.block_of(row_number) != block) {
        publish(block, rows_in_block, failures);
        block = ring_.block_of(row_number);
        rows_in_block = failures = 0;
      }
      // With batch_size == num_envs every block holds each env exactly once,
      // so rows are ordered by env id and step() needs no sort.
      const size_t row = rows_by_env_id ? static_cast<size_t>(env_id) : ring_.row_in_block(row_number);
      const int32_t following = i + 1 < item.count ? queue.next_env(env_id) : -1;  // before the step
      if (!(may_discard && discarded(env_id))) failures += run_env(env_id, item.op, ring_.targets(block), row) ? 0 : 1;
      env_id = following;
      ++rows_in_block;
    }
    publish(block, rows_in_block, failures);
  }

  // Only sync steps and reset() are ever discarded, so a skipped row needs
  // nothing written: the caller drops the whole batch.
  // relaxed: a thread that misses a flag just set runs the env, which the
  // caller's wait allows for (an env already running is waited out anyway).
  bool discarded(int32_t env_id) const { return discard_[env_id].load(std::memory_order_relaxed) != 0; }

  void publish(size_t block, int32_t rows, int32_t failures) {
    // relaxed: the release of add() publishes it with the rows.
    if (failures > 0) block_failures_[block].fetch_add(failures, std::memory_order_relaxed);
    ring_.filled(block).add(rows, ring_.target());
  }

  // False when the env threw (NOTE [Env failures]).
  bool run_env(int32_t env_id, Op op, const FieldTargets& targets, size_t row) {
    Slot& slot = *slots_[env_id];
    const std::array<uint8_t*, kMaxExtras> extras = extras_at(targets, row);
    StepOutput out(targets.at(kObservation, row), spec_.observation.dtype, extras.data());
    auto field = [&](size_t index) { return targets.at(index, row); };
    const size_t observation_bytes = block_layout_.row_bytes(kObservation);
    *reinterpret_cast<int64_t*>(field(kEnvId)) = env_id;
    try {
      const bool reset =
          op != Op::kStep || slot.failed || (options_.autoreset == Autoreset::kNextStep && slot.episode_over);
      if (reset) {
        if (slot.has_pending_seed) slot.rng.reseed(slot.pending_seed), slot.has_pending_seed = false;
        slot.env.reset(slot.rng, out);
        slot.started = true;
        slot.failed = false;
        slot.episode_over = false;
        slot.episode_return = 0.0;
        slot.episode_length = 0;
        write_flags(field, 0.0f, false, false, 0.0, 0);
      } else {
        const Action action = action_for(env_id);
        const StepResult result = slot.env.step(action, slot.rng, out);
        slot.episode_return += result.reward;
        slot.episode_length += 1;
        const bool truncated =
            result.truncated || (spec_.max_episode_steps > 0 && slot.episode_length >= spec_.max_episode_steps);
        write_flags(field, static_cast<float>(result.reward), result.terminated, truncated, slot.episode_return,
                    slot.episode_length);
        if (result.terminated || truncated) {
          if (options_.autoreset == Autoreset::kSameStep) {
            std::memcpy(field(kFinalObservation), field(kObservation), observation_bytes);
            // A named array: StepOutput keeps the pointer, so it must outlive the reset.
            const std::array<uint8_t*, kMaxExtras> scratch = scratch_extras(slot);
            StepOutput next(field(kObservation), spec_.observation.dtype, scratch.data());
            slot.env.reset(slot.rng, next);
            slot.episode_return = 0.0;
            slot.episode_length = 0;
            return true;
          }
          slot.episode_over = true;
        }
      }
      if (options_.autoreset == Autoreset::kSameStep)
        std::memcpy(field(kFinalObservation), field(kObservation), observation_bytes);
    } catch (const std::exception& error) {
      fail_row(slot, field, extras.data(), error.what());
      return false;
    } catch (...) {
      fail_row(slot, field, extras.data(), "unknown C++ exception");
      return false;
    }
    return true;
  }

  template <class FieldAt>
  static void write_flags(FieldAt&& field, float reward, bool terminated, bool truncated, double episode_return,
                          int64_t episode_length) {
    *reinterpret_cast<float*>(field(kReward)) = reward;
    *reinterpret_cast<bool*>(field(kTerminated)) = terminated;
    *reinterpret_cast<bool*>(field(kTruncated)) = truncated;
    *reinterpret_cast<bool*>(field(kDone)) = terminated || truncated;
    *reinterpret_cast<float*>(field(kEpisodeReturn)) = static_cast<float>(episode_return);
    *reinterpret_cast<int64_t*>(field(kEpisodeLength)) = episode_length;
  }

  // Where each extra field of `row` goes.
  std::array<uint8_t*, kMaxExtras> extras_at(const FieldTargets& targets, size_t row) const {
    std::array<uint8_t*, kMaxExtras> extras{};
    for (size_t i = 0; i < spec_.extras.size(); ++i) extras[i] = targets.at(extras_begin_ + i, row);
    return extras;
  }

  std::array<uint8_t*, kMaxExtras> scratch_extras(Slot& slot) const {
    std::array<uint8_t*, kMaxExtras> extras{};
    uint8_t* cursor = slot.extras_scratch.data();
    for (size_t i = 0; i < spec_.extras.size(); ++i) extras[i] = cursor, cursor += scratch_bytes(spec_.extras[i]);
    return extras;
  }

  Action action_for(int32_t env_id) const {
    Action action;
    if (spec_.action.discrete) {
      action.index = action_index_[env_id];
    } else {
      action.values = action_values_.data() + static_cast<size_t>(env_id) * action_size_;
      action.size = static_cast<int64_t>(action_size_);
    }
    return action;
  }

  // NOTE [Env failures]. An env that throws writes a row all the same, so
  // every row of its batch arrives and none is held back: observation (and
  // final_observation, extras) zeroed, reward 0, truncated and done set, the
  // episode's totals so far. The env is marked failed: its next step resets
  // it instead (the action is ignored, as in next_step autoreset), or with
  // autoreset disabled refuses until reset(). The message waits in the slot
  // for the caller, who reads it once the row's block is complete.
  template <class FieldAt>
  void fail_row(Slot& slot, FieldAt&& field, uint8_t* const* extras, const std::string& what) {
    std::memset(field(kObservation), 0, block_layout_.row_bytes(kObservation));
    if (options_.autoreset == Autoreset::kSameStep)
      std::memset(field(kFinalObservation), 0, block_layout_.row_bytes(kObservation));
    for (size_t i = 0; i < spec_.extras.size(); ++i) std::memset(extras[i], 0, spec_.extras[i].row_bytes());
    write_flags(field, 0.0f, false, true, slot.episode_return, slot.episode_length);
    slot.failure = what;
    slot.failed = true;
    slot.started = true;
    slot.episode_over = true;
  }

  const ExecutorOptions options_;
  const Model model_;
  const EnvSpec spec_;
  const size_t extras_begin_;
  const Layout block_layout_;
  const Layout reset_layout_;
  ActionQueue queue_;
  ActionQueue caller_queue_;  // NOTE [The caller's own envs]
  OutputRing ring_;
  SplitTail tail_;        // NOTE [Split tail]
  int32_t substeps_ = 0;  // > 1 where sync steps hold back a split tail
  std::vector<std::unique_ptr<Slot>> slots_;
  // Caller-only bookkeeping: 1 while an env's result is not yet received.
  std::vector<uint8_t> in_flight_;
  std::vector<int64_t> all_ids_;
  std::vector<int32_t> push_ids_;
  // Actions, one slot per env: written by the caller before the push that
  // uses them, read by the worker after claiming the item.
  std::vector<int64_t> action_index_;
  std::vector<double> action_values_;
  size_t action_size_ = 1;
  size_t envs_per_target_item_ = 1;
  bool caller_is_worker_ = false;            // see the constructor
  std::atomic<bool> caller_waiting_{false};  // NOTE [Workers wait out the caller's items]
  std::atomic<int64_t> worker_sleeps_in_calls_{0};

  FieldTargets reset_targets_;
  int32_t reset_target_ = 0;
  FillCounter reset_filled_;

  // Caller-only: NOTE [Interrupted calls].
  struct Abandoned {
    enum Kind { kNone = 0, kBlock = 1, kReset = 2 };
    int kind = kNone;
    size_t block = 0;
    std::vector<int64_t> ids;
  } abandoned_;
  uint64_t rows_sent_ = 0, rows_received_ = 0;  // caller-only
  int64_t undoable_block_ = -1;                 // caller-only: see undo_recv()
  struct {
    std::vector<int64_t> env_ids;
    std::vector<std::string> messages;
  } undo_failures_;  // caller-only: what the undoable block raised
  // Per env, set by the caller of an interrupted call: skip the env's row.
  std::unique_ptr<std::atomic<uint8_t>[]> discard_;
  // Per block, and for reset(): rows holding a failure (NOTE [Env failures]).
  std::unique_ptr<std::atomic<int32_t>[]> block_failures_;
  std::atomic<int32_t> reset_failures_{0};

  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
};

}  // namespace torchpool
