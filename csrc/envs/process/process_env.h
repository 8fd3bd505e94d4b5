// process_env.h — the parent's side of a Python env stepped in a worker process.
//
// ProcessEnv is an ordinary family to the core (env.h): its reset()/step()
// return once the worker process that owns the env has answered, so the
// queue, the ring, episode rules, EnvError and Ctrl-C handling apply as to
// any family. It begins its requests at push time (NOTE [Begun steps]), so a
// send() sets every worker process stepping at once and the core's threads
// only collect. A worker that dies is noticed within kLivenessCheckUs by the
// env waiting on it (the supervisor, torchpool/_workers/supervisor.py,
// restarts it); the env's step then throws, which the core reports as an
// EnvError and answers with a reset, served by the new worker.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>

#include "../../core/env.h"
#include "../../core/wait.h"
#include "shared_region.h"

namespace torchpool::process {

// How often a waiting env checks that its worker process still lives.
inline constexpr int64_t kLivenessCheckUs = 10000;

// What Python registers for one pool before making it (torchpool/_workers/process_pool.py).
struct RegionInfo {
  uint8_t* base = nullptr;  // the parent's mapping, owned by Python, alive until the pool is closed
  RegionLayout layout;
  EnvSpec spec;
  int32_t spin_polls = 0;  // how long an env polls for its answer before it sleeps
};

class RegionRegistry {
 public:
  static RegionRegistry& instance() {
    static RegionRegistry* registry = new RegionRegistry();  // never destroyed: pools may outlive statics
    return *registry;
  }
  int64_t add(std::shared_ptr<const RegionInfo> info) {
    std::lock_guard<std::mutex> lock(mutex_);
    regions_[++last_key_] = std::move(info);
    return last_key_;
  }
  // The Model takes its region once; the registry forgets it then.
  std::shared_ptr<const RegionInfo> take(int64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = regions_.find(key);
    if (it == regions_.end()) throw std::invalid_argument("no process region registered as " + std::to_string(key));
    auto info = std::move(it->second);
    regions_.erase(it);
    return info;
  }
  // A pool whose making failed forgets its region (the Model may have taken it already: then false).
  bool forget(int64_t key) {
    std::lock_guard<std::mutex> lock(mutex_);
    return regions_.erase(key) != 0;
  }
  size_t size() {
    std::lock_guard<std::mutex> lock(mutex_);
    return regions_.size();
  }

 private:
  std::mutex mutex_;
  std::map<int64_t, std::shared_ptr<const RegionInfo>> regions_;
  int64_t last_key_ = 0;
};

struct ProcessModel {
  std::shared_ptr<const RegionInfo> info;
  Region region;

  explicit ProcessModel(const Config& config)
      : info(RegionRegistry::instance().take(config.integer("region"))), region(info->base, info->layout) {}

  EnvSpec spec(Dtype) const { return info->spec; }

  // The steady-clock time at which an env of this pool first saw Ctrl-C count `count`, so every env waiting
  // in the call gives up at the same deadline, however many hang; each from its own first look would wait a
  // grace of its own, one after another behind a stuck worker (NOTE [Ctrl-C while workers step]).
  std::chrono::steady_clock::time_point interrupt_seen(uint32_t count) const {
    std::lock_guard<std::mutex> lock(interrupt_mutex_);
    if (!interrupt_seen_ || count != interrupt_count_)
      interrupt_seen_ = true, interrupt_count_ = count, interrupt_time_ = std::chrono::steady_clock::now();
    return interrupt_time_;
  }

  size_t worker_of(size_t env_id) const {
    for (size_t w = 0; w < info->layout.num_workers; ++w) {
      const WorkerControl& worker = region.worker(w);
      if (env_id >= worker.first_env && env_id < worker.first_env + worker.env_count) return w;
    }
    throw std::logic_error("env " + std::to_string(env_id) + " belongs to no worker process");
  }

 private:
  // Mutable: when a Ctrl-C was first seen is the pool's, not an env's (interrupt_seen()); only that path locks.
  mutable std::mutex interrupt_mutex_;
  mutable bool interrupt_seen_ = false;
  mutable uint32_t interrupt_count_ = 0;
  mutable std::chrono::steady_clock::time_point interrupt_time_{};
};

class ProcessEnv {
 public:
  using Model = ProcessModel;

  ProcessEnv(const Model& model, size_t env_id)
      : model_(&model),
        id_(env_id),
        worker_index_(model.worker_of(env_id)),
        control_(&model.region.env(env_id)),
        worker_(&model.region.worker(worker_index_)) {
    request_ = control_->request.load(std::memory_order_relaxed);
  }

  // Gymnasium's convention: env i's first reset gets seed + i, later ones none.
  void reseed(uint64_t seed) {
    seed_ = static_cast<int64_t>(seed & 0x7fffffffffffffffULL);
    has_seed_ = true;
  }

  void begin(bool reset, const Action& action) {
    if (outstanding_) {  // begun, never run: Ctrl-C discarded it, but the worker ran it (NOTE [Lost answers])
      collect_quietly();
      lost_answer_ = true;
    }
    if (lost_answer_ && !reset) return;  // step() throws; nothing is sent
    lost_answer_ = false;
    control_->op = reset ? kOpReset : kOpStep;
    control_->seed = reset && has_seed_ ? seed_ : -1;
    if (reset) has_seed_ = false;
    if (!reset) {
      double* slot = model_->region.action(id_);
      if (action.values == nullptr)
        slot[0] = static_cast<double>(action.index);
      else
        std::memcpy(slot, action.values, static_cast<size_t>(action.size) * sizeof(double));
    }
    generation_ = worker_->generation.load(std::memory_order_acquire);
    pid_ = worker_->pid.load(std::memory_order_acquire);
    // A Ctrl-C from here on is this request's, even one that comes before a thread starts waiting for it
    // (behind another env of the same worker): NOTE [Ctrl-C while workers step].
    interrupts_at_begin_ = model_->region.header().interrupts.load(std::memory_order_relaxed);
    control_->request.store(++request_, std::memory_order_release);
    outstanding_ = true;
    begun_reset_ = reset;
    if (model_->region.header().answer_in_caller != nullptr) return;  // NOTE [Answers in the caller]
    worker_->doorbell.fetch_add(1, std::memory_order_seq_cst);        // NOTE [Sleeping across processes]
    if (worker_->sleeping.load(std::memory_order_seq_cst) != 0) futex_wake(worker_->doorbell);
  }

  void reset(Rng&, StepOutput& out) {
    if (!outstanding_ || !begun_reset_) begin(true, Action{});
    collect(out);
  }

  StepResult step(const Action& action, Rng&, StepOutput& out) {
    if (!outstanding_ || begun_reset_) begin(false, action);
    if (lost_answer_)
      throw std::runtime_error("env " + std::to_string(id_) +
                               "'s last request ran in its worker process, but Ctrl-C discarded its answer; "
                               "the env starts a new episode");
    collect(out);
    const Region& region = model_->region;
    return {region.reward(id_), region.terminated(id_), region.truncated(id_)};
  }

 private:
  void collect(StepOutput& out) {
    wait_for_answer();
    if (control_->failed != 0) throw std::runtime_error(std::string(model_->region.error(id_), control_->error_length));
    const Region& region = model_->region;
    const size_t fields = model_->info->spec.observations.size();
    for (size_t c = 0; c < region.layout().columns.size(); ++c) {
      uint8_t* target = c < fields ? out.observation_bytes(c) : out.extra_bytes(c - fields);
      std::memcpy(target, region.column(c, id_), region.layout().column_bytes[c]);
    }
  }

  // NOTE [Lost answers]. The core drops the rows of a sync step() or reset()
  // that Ctrl-C interrupted and skips the envs no thread had reached yet
  // (NOTE [Interrupted calls]); a native env then simply never ran. This
  // env's request was already sent at push time, so its worker ran it: the
  // Python env moved on while the core's episode books (length, return, the
  // termination) did not. Rather than step on from a state the books never
  // saw, the env's next step fails (an EnvError: the env resets), which puts
  // both back in step; a reset the core asks for meanwhile does the same
  // without an error.
  void collect_quietly() {
    try {
      wait_for_answer();
    } catch (const std::exception&) {  // a dead worker: the request is gone with it
    }
  }

  void wait_for_answer() {
    outstanding_ = false;
    auto answered = [this] { return control_->done.load(std::memory_order_acquire) == request_; };
    if (const AnswerInCaller answer = model_->region.header().answer_in_caller) {  // NOTE [Answers in the caller]
      if (!answered()) answer(static_cast<int64_t>(id_));
      if (!answered()) fail_unanswered();
      return;
    }
    const std::atomic<uint32_t>& interrupts = model_->region.header().interrupts;
    for (int32_t i = 0; i < model_->info->spin_polls; ++i) {
      if (answered()) return check_same_worker();
      std::this_thread::yield();  // NOTE [Yielding spins]
    }
    while (!answered()) {
      const uint32_t seen = control_->done.load(std::memory_order_relaxed);
      control_->waiting.store(1, std::memory_order_seq_cst);  // NOTE [Sleeping across processes]
      // seq_cst, as the worker's store of `done` (NOTE [Re-checks after the announcement], wait.h).
      if (control_->done.load(std::memory_order_seq_cst) == request_) break;
      futex_wait(control_->done, seen, kLivenessCheckUs);
      if (answered()) break;
      check_worker_alive();
      // Relaxed (NOTE [Ctrl-C while workers step], shared_region.h): only the count matters; a late look costs one
      // slice.
      if (const uint32_t count = interrupts.load(std::memory_order_relaxed); count != interrupts_at_begin_) {
        const auto since = std::chrono::steady_clock::now() - model_->interrupt_seen(count);
        if (since >= std::chrono::microseconds(kInterruptGraceUs)) give_up_after_interrupt();
      }
    }
    control_->waiting.store(0, std::memory_order_relaxed);
    check_same_worker();
  }

  [[noreturn]] void give_up_after_interrupt() {
    control_->waiting.store(0, std::memory_order_relaxed);
    lost_answer_ = true;  // its answer, if it ever comes, is for a step the books will not count
    throw std::runtime_error("env " + std::to_string(id_) + "'s worker process had not answered " +
                             std::to_string(kInterruptGraceUs / 1000) +
                             " ms after Ctrl-C (its env may hang; the step_timeout stops it); the env starts a "
                             "new episode");
  }

  // The callback raised before it answered (it catches every exception, so
  // this is a bug of the callback's or an interpreter shutting down).
  void fail_unanswered() {
    static constexpr char kNoAnswer[] = "the env's request found no answer in the calling process";
    const size_t length = std::min(sizeof(kNoAnswer) - 1, model_->region.layout().error_bytes);
    std::memcpy(model_->region.error(id_), kNoAnswer, length);
    control_->error_length = static_cast<uint32_t>(length);
    control_->failed = 1;
    control_->done.store(request_, std::memory_order_release);
  }

  // An answer from a replacement of the worker the request was sent to (its
  // "restarted since the last reset") may come before this env checks the
  // worker it waited on: the death is what the env reports.
  void check_same_worker() {
    if (worker_->generation.load(std::memory_order_acquire) != generation_) check_worker_alive();
  }

  // Whether the supervisor has recorded the death of the worker the request was sent to; if so, `how` is its
  // exit status (left empty for a worker it killed for the step timeout: check_worker_alive says so).
  bool death_recorded(std::string& how) const {
    if (worker_->generation.load(std::memory_order_acquire) == generation_) return false;
    const int32_t status = worker_->exit_status.load(std::memory_order_acquire);
    if (status < kStoppedForTimeout) how = describe_status(status);
    return true;
  }

  // Throws when the worker that was sent the request has died.
  void check_worker_alive() {
    std::string how;
    if (!death_recorded(how)) {
#if defined(__linux__)
      siginfo_t info{};
      // WNOWAIT: look without reaping; the supervisor reaps and restarts it.
      if (pid_ <= 0) pid_ = worker_->pid.load(std::memory_order_acquire);  // sent while the replacement started
      if (pid_ <= 0) return;
      if (waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0) {
        if (errno != ECHILD) return;
        // The supervisor records the status and bumps the generation before it reaps: reaped between the
        // first look and this waitid, the worker's status is the recorded one.
        if (!death_recorded(how)) how = "its exit status was collected elsewhere";  // reaped, not by the supervisor
      } else if (info.si_pid == 0) {
        return;  // still running
      } else {
        how = info.si_code == CLD_EXITED ? describe_status(info.si_status) : describe_status(-info.si_status);
      }
#else
      return;
#endif
    }
    control_->waiting.store(0, std::memory_order_relaxed);
    const WorkerControl& worker = *worker_;
    const std::string process = "worker process " + std::to_string(worker_index_) + " (pid " + std::to_string(pid_) +
                                "), which steps envs " + std::to_string(worker.first_env) + "-" +
                                std::to_string(worker.first_env + worker.env_count - 1);
    const int32_t status = worker.exit_status.load(std::memory_order_acquire);
    if (how.empty() && status >= kStoppedForTimeout) {  // NOTE [Step timeout]
      const size_t stuck = static_cast<size_t>(status - kStoppedForTimeout);
      const double seconds = model_->region.header().step_timeout_ms / 1000.0;
      char limit[32];
      std::snprintf(limit, sizeof(limit), "%g s", seconds);
      throw std::runtime_error((stuck == id_ ? std::string("this env's") : "env " + std::to_string(stuck) + "'s") +
                               " reset or step ran past the pool's step_timeout (" + limit + ") in " + process +
                               ": the pool killed that process; it is restarted and its envs start new episodes");
    }
    throw std::runtime_error(process + ", died (" + how + "); it is restarted and its envs start new episodes");
  }

  static std::string describe_status(int32_t status) {
    if (status >= 0) return "exit code " + std::to_string(status);
    const char* name = "";
    switch (-status) {
      case SIGKILL:
        name = " (SIGKILL)";
        break;
      case SIGSEGV:
        name = " (SIGSEGV)";
        break;
      case SIGABRT:
        name = " (SIGABRT)";
        break;
      case SIGTERM:
        name = " (SIGTERM)";
        break;
      case SIGBUS:
        name = " (SIGBUS)";
        break;
      default:
        break;
    }
    return "killed by signal " + std::to_string(-status) + name;
  }

  const Model* model_;
  size_t id_;
  size_t worker_index_;
  EnvControl* control_;
  WorkerControl* worker_;
  uint32_t request_ = 0;
  uint32_t interrupts_at_begin_ = 0;  // the pool's Ctrl-C count when the request was sent
  uint32_t generation_ = 0;
  int32_t pid_ = 0;
  int64_t seed_ = -1;
  bool has_seed_ = false;
  bool outstanding_ = false;
  bool begun_reset_ = false;
  bool lost_answer_ = false;  // NOTE [Lost answers]
};

}  // namespace torchpool::process
