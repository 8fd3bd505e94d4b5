// executor.h — worker threads that run an Env family over the action queue.
//
// Data flow: the caller validates a send() and copies the actions into
// per-env slots, pushes work items, and returns. Workers (and the caller
// itself while it waits in step/recv/reset) claim items, step or reset each
// env in the item, and write every output field straight into a row of an
// output block. The caller then hands the block to Python as tensors.
// Which threads do what is not decided here: the constructor asks
// plan_schedule() (schedule.h) once and the rest follows its Schedule.
//
// Guarantees (docs/design.md, "The rules the core keeps"):
// - an env is in at most one item at a time (the caller refuses a second
//   action for an env in flight), so one thread at a time touches it;
// - each env has its own Rng seeded from (seed + env_id), so results do not
//   depend on num_threads or on which thread ran the env;
// - an exception in an env is captured in that env's row and raised (as
//   EnvFailure) by the wait whose batch holds the row; it never crosses a
//   thread, and the env is reset before it steps again (NOTE [Env failures]);
// - the caller's books (ledger.h) keep each call all-or-nothing, even when
//   Python raises KeyboardInterrupt between two of its own statements;
// - a blocking call interrupted by Ctrl-C leaves no work behind (NOTE
//   [Interrupted calls]);
// - close() stops and joins workers even with work in flight.
#pragma once

#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "action_queue.h"
#include "actions.h"
#include "env.h"
#include "episode.h"
#include "errors.h"
#include "executor_api.h"
#include "ledger.h"
#include "output_ring.h"
#include "schedule.h"
#include "split_tail.h"
#include "threads.h"

namespace torchpool {

template <class Env>
class Executor final : public ExecutorBase {
  using Model = typename Env::Model;
  using Slot = EnvSlot<Env>;
  using Abandoned = Ledger::Abandoned;

 public:
  Executor(const Config& config, const ExecutorOptions& options)
      : options_(options),
        model_(config),
        spec_(model_.spec(options.obs_dtype).with_time_limit(options.max_episode_steps)),
        block_layout_(output_fields(spec_, options.autoreset), options.batch_size),
        reset_layout_(output_fields(spec_, options.autoreset), options.num_envs),
        rules_(EpisodeRules::of(spec_, options.autoreset)),
        queue_(options.num_envs),
        ring_(options.num_blocks, options.batch_size),
        books_(options.num_envs),
        all_ids_(options.num_envs),
        actions_(spec_.action, options.num_envs),
        discard_(options.num_envs),
        failures_(options.num_blocks) {
    if (spec_.extras.size() > kMaxExtras) throw std::logic_error("too many extra fields");
    ScheduleInput input{spec_.step_cost_ns, options.num_envs,   options.batch_size,  options.num_threads,
                        /*substeps=*/0,     options.spin.polls, options.schedule_off};
    // Costly envs can be costly to build too: on the plan's build_threads at once.
    slots_.resize(options.num_envs);
    run_on_threads(
        plan_schedule(input).build_threads, options.num_envs,
        [this](size_t id) { slots_[id] = std::make_unique<Slot>(model_, id, options_.seed + id, rules_); },
        options.build_check);
    if constexpr (kCanSplit) input.substeps = slots_[0]->env.substeps();
    plan_ = plan_schedule(input);
    tail_.allocate(plan_.split_tail_size(options.num_envs));  // only a step of every env holds a tail
    for (size_t id = 0; id < options.num_envs; ++id) all_ids_[id] = static_cast<int64_t>(id);
    start_workers();
  }

  ~Executor() override { close(); }

  const EnvSpec& spec() const override { return spec_; }
  const ExecutorOptions& options() const override { return options_; }
  const Layout& block_layout() const override { return block_layout_; }
  const Layout& reset_layout() const override { return reset_layout_; }
  void set_block(size_t block, uint8_t* base) override {
    check_no_rows_in_flight(block);
    ring_.set_targets(block, block_layout_.targets(base));
  }
  void set_block_targets(size_t block, const FieldTargets& targets) override {
    check_no_rows_in_flight(block);
    ring_.set_targets(block, targets);
  }
  void set_reset_buffer(uint8_t* base) override { reset_targets_ = reset_layout_.targets(base); }

  void send(const void* actions, Dtype dtype, const int64_t* ids, size_t count) override {
    settle(nullptr);
    if (ids == nullptr) ids = all_ids_.data();
    check_ids(ids, count, /*for_step=*/true);
    actions_.copy(actions, dtype, ids, count);
    push(Op::kStep, ids, count, 0);
    books_.sent += count;
  }

  void async_reset(const int64_t* ids, size_t count) override {
    settle(nullptr);
    if (ids == nullptr) ids = all_ids_.data();
    check_ids(ids, count, /*for_step=*/false);
    push(Op::kReset, ids, count, 0);
    books_.sent += count;
  }

  size_t step(const void* actions, Dtype dtype, void* record, const InterruptCheck& check) override {
    settle(check);
    if (books_.sent != books_.received)
      throw std::runtime_error("step() needs every env idle, but some are in flight; recv() them first");
    const size_t count = options_.num_envs;
    check_ids(all_ids_.data(), count, /*for_step=*/true);
    actions_.copy(actions, dtype, all_ids_.data(), count);
    if (record != nullptr) std::memcpy(record, actions, count * actions_.action_size() * dtype_size(dtype));
    const size_t block = next_block();
    push(Op::kStep, all_ids_.data(), count, 0);
    books_.sent += count;
    wait_or_discard(Abandoned::kBlock, block, all_ids_.data(), count, check);
    finish_block(block);
    return block;
  }

  size_t recv(const InterruptCheck& check) override {
    settle(check);
    const uint64_t pending = books_.sent - books_.received;
    if (pending < options_.batch_size)
      throw std::runtime_error("recv() needs batch_size=" + std::to_string(options_.batch_size) +
                               " envs in flight, but " + std::to_string(pending) +
                               " are; send() actions (or async_reset()) first");
    const size_t block = next_block();
    // An interrupt here changes nothing: the rows stay in flight for the next recv().
    wait_until(ring_.filled(block), ring_.target(), check);
    // Undoable from here on: Python builds an EnvFailure's exception in Python
    // code, where KeyboardInterrupt can replace it after the batch was taken.
    books_.undo.block = static_cast<int64_t>(block);
    finish_block(block);
    return block;
  }

  bool undo_recv() override {
    Ledger::Undo& undo = books_.undo;
    if (undo.block < 0) return false;
    const auto block = static_cast<size_t>(std::exchange(undo.block, -1));
    books_.received -= options_.batch_size;
    ring_.filled(block).restore(ring_.target());
    if (!undo.env_ids.empty()) {  // the failures it raised are raised again
      failures_.set(block, static_cast<int32_t>(undo.env_ids.size()));
      for (size_t i = 0; i < undo.env_ids.size(); ++i) slots_[undo.env_ids[i]]->failure = undo.messages[i];
    }
    books_.mark(block_env_ids(block), options_.batch_size, 1);
    return true;
  }

  void reset(const int64_t* ids, size_t count, const uint64_t* seeds, const InterruptCheck& check) override {
    settle(check);
    if (ids == nullptr) ids = all_ids_.data();
    check_ids(ids, count, /*for_step=*/false);
    if (seeds != nullptr)
      for (size_t i = 0; i < count; ++i)
        slots_[ids[i]]->pending_seed = seeds[i], slots_[ids[i]]->has_pending_seed = true;
    run_into_reset_buffer(Op::kResetInto, ids, count, check);
  }

  void step_some(const void* actions, Dtype dtype, const int64_t* ids, size_t count,
                 const InterruptCheck& check) override {
    settle(check);
    if (books_.sent != books_.received)
      throw InputError("step(action, env_id) of some envs needs every env idle, but some are in flight");
    check_ids(ids, count, /*for_step=*/true);
    actions_.copy(actions, dtype, ids, count);
    run_into_reset_buffer(Op::kStepInto, ids, count, check);
  }

  bool must_settle() const override { return books_.abandoned.kind != Abandoned::kNone; }

  // Finishes an interrupted call (NOTE [Interrupted calls]) before any other.
  void settle(const InterruptCheck& check) override {
    books_.undo.block = -1;
    books_.undo.env_ids.clear();
    Abandoned& abandoned = books_.abandoned;
    if (abandoned.kind == Abandoned::kNone) return;
    const bool block_kind = abandoned.kind == Abandoned::kBlock;
    FillCounter& counter = filled_of(abandoned.kind, abandoned.block);
    wait_until(counter, target_of(abandoned.kind), check);  // may throw again: still abandoned
    counter.clear();
    books_.mark(abandoned.ids.data(), abandoned.ids.size(), 0);
    for (const int64_t id : abandoned.ids) {
      discard_[id].store(0, std::memory_order_relaxed);
      slots_[id]->failure.clear();           // the failed env is still reset before it steps again
      slots_[id]->has_pending_seed = false;  // an interrupted reset(seed=...) leaves no seed behind
    }
    failures_.set(block_kind ? abandoned.block : EnvFailure::kResetBatch, 0);
    if (block_kind) books_.received += options_.batch_size;
    abandoned.kind = Abandoned::kNone;
  }

  bool wakes_workers(size_t count) const override { return plan_.wakes_workers(count); }
  const Schedule& schedule() const override { return plan_; }
  uint64_t rows_sent() const override { return books_.sent; }
  uint64_t rows_received() const override { return books_.received; }
  uint64_t in_flight() const override {
    const uint64_t abandoned = books_.abandoned.kind == Abandoned::kBlock ? options_.batch_size : 0;
    return books_.sent - books_.received - abandoned;
  }
  size_t next_block() const override { return (books_.received / options_.batch_size) % ring_.num_blocks(); }

  void forget_threads() override {
    stopping_.store(true);
    // Leaked on purpose: destroying a joinable std::thread terminates, and joining one that does not exist here hangs.
    (void)std::make_unique<std::vector<std::thread>>(std::move(workers_)).release();
    workers_.clear();
  }

  // State injection (parity tests), for families that support it (EnvSlot::state).
  std::vector<double> get_state(size_t env_id) const override { return slots_[books_.idle(env_id)]->state(); }
  void set_state(size_t env_id, const std::vector<double>& state) override {
    slots_[books_.idle(env_id)]->set_state(state);
  }

  bool has_state() const override { return Slot::kHasState; }
  bool renders() const override { return Slot::kRenders; }
  std::vector<int64_t> render(size_t env_id, std::vector<uint8_t>& pixels) const override {
    return slots_[books_.idle(env_id)]->render(pixels);
  }

  void close() override {
    if (stopping_.exchange(true)) return;
    queue_.available().release(static_cast<int32_t>(workers_.size()));
    for (std::thread& worker : workers_) worker.join();
  }

 private:
  static constexpr bool kCanSplit = SplitsSteps<Env>;  // NOTE [Split tail]

  // A thread that cannot start (too many threads, too little memory for its
  // stack) fails the pool with the reason; the workers already started are
  // stopped and joined first, since destroying a joinable thread terminates the process.
  void start_workers() {
    for (size_t i = 0; i < plan_.worker_threads; ++i) {
      try {
        workers_.emplace_back([this, i] { work(static_cast<int32_t>(i) + 1); });
      } catch (const std::exception& error) {
        close();
        throw std::runtime_error("could not start worker thread " + std::to_string(i + 1) + " of " +
                                 std::to_string(plan_.worker_threads) + ": " + error.what() +
                                 " (fewer threads: num_threads=" + std::to_string(i) + ")");
      }
      pin_and_name(workers_.back(), options_.thread_affinity_offset, i);
    }
  }

  // ---- caller side -------------------------------------------------------

  // A block is pointed elsewhere only while no row in flight lands in it: the
  // workers read its targets without a lock, and rows split between two
  // buffers would leave both incomplete.
  void check_no_rows_in_flight(size_t block) const {
    if (books_.sent == books_.received) return;  // the usual case: nothing in flight at all
    const uint64_t batch = options_.batch_size;
    for (uint64_t index = books_.received / batch; index * batch < books_.sent; ++index)
      if (index % ring_.num_blocks() == block)
        throw InputError("block " + std::to_string(block) +
                         " cannot be pointed at other memory: rows in flight land in it; recv() them first");
  }

  // Ids first (Ledger::check_ids), then whether each env may step now.
  void check_ids(const int64_t* ids, size_t count, bool for_step) {
    books_.check_ids(ids, count);
    for (size_t i = 0; i < count && for_step; ++i)
      if (!slots_[ids[i]]->may_step(options_.autoreset))
        throw InputError(slots_[ids[i]]->refuses_step(ids[i], options_.autoreset));
  }

  void push(Op op, const int64_t* ids, size_t count, uint32_t position) {
    if (stopping_.load(std::memory_order_relaxed)) throw InputError("the pool is closed");
    push_ids_.assign(ids, ids + count);
    books_.mark(ids, count, 1);
    const auto chunk = static_cast<uint32_t>(plan_.envs_per_item(count));
    // Only a step of every env holds back a tail; the plan has one only for sync pools.
    const size_t held = op == Op::kStep && count == options_.num_envs ? split_tail_size(count) : 0;
    const size_t queued = count - held;
    if (held > 0) tail_.arm(push_ids_.data() + queued, held, plan_.split_substeps, options_.num_threads);
    if constexpr (BeginsSteps<Env>)  // NOTE [Begun steps]: before any thread can claim them
      for (size_t i = 0; i < count; ++i)
        slots_[ids[i]]->begin(op == Op::kStep, actions_.at(ids[i]), options_.autoreset);
    queue_.push(op, push_ids_.data(), static_cast<uint32_t>(queued), chunk, position, wakes_workers(queued));
  }

  // How many of a sync step's envs (the last ones) go to the split tail
  // (NOTE [Split tail]): the plan's share, or none when one of them would
  // reset instead of stepping.
  size_t split_tail_size(size_t count) const {
    const size_t held = plan_.split_tail_size(count);
    for (size_t i = count - held; i < count; ++i)
      if (slots_[push_ids_[i]]->resets_on_step(options_.autoreset)) return 0;
    return held;
  }

  // Any thread: one piece of the split tail, if one is free. The holder of an
  // env's last substep runs its step, which writes the row.
  // `self`: 0 for the caller, 1 + i for worker i.
  bool run_tail_piece(int32_t self) {
    if constexpr (!kCanSplit) {
      return false;
    } else {
      if (plan_.split_substeps < 2) return false;
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
        slots_[piece.env]->env.advance(actions_.at(piece.env));
        tail_.put_back(piece);
      } catch (const std::exception& error) {
        tail_.finish(piece);
        fail_tail_row(piece.env, error.what());
      } catch (...) {  // a user env may throw anything; escaping this worker thread would terminate the process
        tail_.finish(piece);
        fail_tail_row(piece.env, "unknown C++ exception");
      }
      return true;
    }
  }

  bool tail_has_work() const { return plan_.split_substeps >= 2 && tail_.has_work(); }

  // The row of a split-tail env whose substep threw (sync pools: row = env id).
  void fail_tail_row(int32_t env_id, const std::string& what) {
    const size_t block = ring_.block_of(ring_.claim_rows(1));
    const Row row = rules_.row_at(ring_.targets(block), static_cast<size_t>(env_id));
    row.at<int64_t>(kEnvId) = env_id;
    slots_[env_id]->fail(row, rules_, what);
    publish(block, 1, 1);
  }

  // The caller runs queued items itself while it waits where the plan says so:
  // cheap envs (no worker is woken at all) and pools where it replaces a worker.
  void wait_until(FillCounter& counter, int32_t target, const InterruptCheck& check) {
    const bool caller_runs_items = plan_.caller_runs_items;
    const int32_t spin_polls = plan_.caller_spin_polls;
    int32_t polls = 0;
    bool spun_for_last_items = false;
    while (!counter.reached(target)) {
      if (caller_runs_items && queue_.available().try_acquire()) {
        run(queue_.claim(), queue_);
        polls = 0;
        continue;
      }
      if (run_tail_piece(/*self=*/0)) {
        polls = 0;
        continue;
      }
      if (++polls < spin_polls) {
        TORCHPOOL_PAUSE();
        continue;
      }
      if (plan_.caller_last_items_spin_ns > 0 && !spun_for_last_items) {
        // A tail env put back meanwhile sends the caller round again, free to spin once more.
        spun_for_last_items = !spin_for_last_items(counter, target);
        continue;
      }
      counter.sleep(target, schedule::kCallerSleepSliceUs);
      if (check) check();
    }
  }

  // NOTE [The caller waits out the last items] (schedule.h). True when it
  // stopped for a piece of the split tail to take.
  bool spin_for_last_items(FillCounter& counter, int32_t target) const {
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::nanoseconds(static_cast<int64_t>(plan_.caller_last_items_spin_ns));
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
  // call abandoned (Ledger::abandoned), and the next call settles it first.
  void wait_or_discard(int kind, size_t block, const int64_t* ids, size_t count, const InterruptCheck& check) {
    try {
      wait_until(filled_of(kind, block), target_of(kind), check);
    } catch (...) {
      books_.abandoned = {kind, block, std::vector<int64_t>(ids, ids + count)};
      for (size_t i = 0; i < count; ++i) discard_[ids[i]].store(1, std::memory_order_relaxed);
      settle(check);
      throw;
    }
  }

  // What a sync step() (kBlock: its ring block) or a reset() waits on, and the count it waits for.
  FillCounter& filled_of(int kind, size_t block) {
    return kind == Abandoned::kBlock ? ring_.filled(block) : reset_filled_;
  }
  int32_t target_of(int kind) const { return kind == Abandoned::kBlock ? ring_.target() : reset_target_; }

  // The caller's side of a complete block: its envs are idle again, it counts
  // as received, and the failures among its rows are raised.
  void finish_block(size_t block) {
    const int64_t* ids = block_env_ids(block);
    books_.mark(ids, options_.batch_size, 0);
    ring_.filled(block).clear();
    books_.received += options_.batch_size;
    // The rows' failures were counted before the rows themselves (FillCounter's acquire).
    if (failures_.take(block) > 0) throw_failures(block, ids, options_.batch_size);
  }

  // The envs whose rows a complete block holds, in row order. In a sync pool
  // that is every env, in order, not read back from the env_id column: a
  // caller's targets may alias it, and an id read from it indexes memory.
  const int64_t* block_env_ids(size_t block) {
    if (options_.batch_size == options_.num_envs) return all_ids_.data();
    const FieldTargets& targets = ring_.targets(block);
    block_ids_.resize(options_.batch_size);
    for (size_t row = 0; row < options_.batch_size; ++row)
      block_ids_[row] = *reinterpret_cast<const int64_t*>(targets.at(rules_.column(kEnvId), row));
    return block_ids_.data();
  }

  // reset() and step_some(): `op` (kResetInto or kStepInto) for each of `ids`, their rows in the reset
  // buffer in `ids` order, waited for; a failed env's EnvFailure thrown.
  void run_into_reset_buffer(Op op, const int64_t* ids, size_t count, const InterruptCheck& check) {
    reset_target_ = static_cast<int32_t>(count);
    push(op, ids, count, 0);
    wait_or_discard(Abandoned::kReset, 0, ids, count, check);
    reset_filled_.clear();
    books_.mark(ids, count, 0);
    if (failures_.take(EnvFailure::kResetBatch) > 0) throw_failures(EnvFailure::kResetBatch, ids, count);
  }

  // Throws EnvFailure for the envs among `ids` whose row holds a failure, kept for undo_recv().
  [[noreturn]] void throw_failures(size_t block, const int64_t* ids, size_t count) {
    EnvFailure failure = take_failures(slots_, block, ids, count);
    books_.undo.env_ids = failure.env_ids;
    books_.undo.messages = failure.messages;
    throw failure;
  }

  // ---- worker side -------------------------------------------------------

  // Spins polling the queue (and the split tail), then sleeps on it. close()
  // wakes sleepers with units that carry no item: check stopping before claiming.
  void work(int32_t self) {
    auto stopping = [this] { return stopping_.load(std::memory_order_relaxed); };
    const SpinPolicy no_spin{0};
    while (true) {
      bool acquired = false;
      for (int32_t i = 0; i < options_.spin.polls; ++i) {
        if ((acquired = queue_.available().try_acquire())) break;
        if (run_tail_piece(self))
          i = 0;
        else
          TORCHPOOL_PAUSE();
      }
      if (!acquired && !queue_.available().acquire(no_spin, stopping)) return;
      if (stopping()) return;
      run(queue_.claim(), queue_);
    }
  }

  // `may_discard`: false for the last piece of a split-tail env, whose other
  // substeps already ran (the step must end, or the env stays mid-step).
  void run(const WorkItem& item, const ActionQueue& queue, bool may_discard = true) {
    int32_t env_id = item.first_env;
    if (item.op == Op::kResetInto || item.op == Op::kStepInto) {
      const Op op = item.op == Op::kStepInto ? Op::kStep : Op::kResetInto;
      int32_t failures = 0;
      for (uint32_t i = 0; i < item.count; ++i) {
        const int32_t following = i + 1 < item.count ? queue.next_env(env_id) : -1;  // before the step
        if (!discarded(env_id)) failures += run_env(env_id, op, reset_targets_, item.position + i) ? 0 : 1;
        env_id = following;
      }
      failures_.add(EnvFailure::kResetBatch, failures);
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
    failures_.add(block, failures);
    ring_.filled(block).add(rows, ring_.target());
  }

  // False when the env threw (NOTE [Env failures]).
  bool run_env(int32_t env_id, Op op, const FieldTargets& targets, size_t row_index) {
    const Row row = rules_.row_at(targets, row_index);
    row.at<int64_t>(kEnvId) = env_id;
    return slots_[env_id]->run(op == Op::kStep, actions_.at(env_id), row, rules_);
  }

  const ExecutorOptions options_;
  const Model model_;
  const EnvSpec spec_;
  const Layout block_layout_;
  const Layout reset_layout_;
  const EpisodeRules rules_;
  ActionQueue queue_;
  OutputRing ring_;
  SplitTail tail_;  // NOTE [Split tail]
  std::vector<std::unique_ptr<Slot>> slots_;
  Ledger books_;  // caller-only
  std::vector<int64_t> all_ids_;
  std::vector<int32_t> push_ids_;
  std::vector<int64_t> block_ids_;  // scratch of block_env_ids()
  ActionTable actions_;
  Schedule plan_;  // set once by the constructor

  FieldTargets reset_targets_;
  int32_t reset_target_ = 0;
  FillCounter reset_filled_;

  // Per env, set by the caller of an interrupted call: skip the env's row.
  std::vector<std::atomic<uint8_t>> discard_;  // zeroed: atomics value-initialize (C++20)
  FailureCounts failures_;  // rows holding a failure, per block and for reset() (NOTE [Env failures])

  std::atomic<bool> stopping_{false};
  std::vector<std::thread> workers_;
};

}  // namespace torchpool
