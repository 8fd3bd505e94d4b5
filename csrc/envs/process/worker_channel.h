// worker_channel.h — a worker process's side of the shared region.
//
// The worker's Python loop (torchpool/_workers/worker.py) asks take() for
// the requests waiting for its envs, answers each (result columns written
// from NumPy views of the same region, then finish() or fail()), and asks
// again. take() first wakes the parent threads sleeping on the answers just
// given, once per batch rather than once per env, then sleeps on the
// doorbell (GIL released) until a request arrives, the pool shuts down, or
// the parent process is gone.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../../core/wait.h"
#include "shared_region.h"

namespace torchpool::process {

// How often a sleeping worker checks that its parent still lives.
inline constexpr int64_t kParentCheckUs = 100000;

class WorkerChannel {
 public:
  WorkerChannel(uint8_t* base, const RegionLayout& layout, size_t worker, int32_t spin_polls)
      : region_(base, layout),
        worker_(&region_.worker(worker)),
        first_(worker_->first_env),
        count_(worker_->env_count),
        taken_(count_, 0),
        spin_polls_(spin_polls),
        parent_(getppid()) {}

  size_t first_env() const { return first_; }
  size_t env_count() const { return count_; }

  // Fills `out` with (env, op, seed, discrete action) rows of waiting requests
  // (the action as an index, for a Discrete action space; else 0); returns how
  // many, or -1 when the worker should exit (shutdown, or the parent died).
  // Call with the GIL released.
  int64_t take(int64_t* out) {
    wake_answered();
    std::atomic<uint32_t>& doorbell = worker_->doorbell;
    int32_t polls = 0;
    while (true) {
      const uint32_t rung = doorbell.load(std::memory_order_acquire);
      if (region_.header().shutdown.load(std::memory_order_acquire) != 0) return -1;
      const int64_t found = scan(out);
      if (found > 0) return found;
      if (++polls < spin_polls_) {
        std::this_thread::yield();  // NOTE [Yielding spins]
        continue;
      }
      worker_->sleeping.store(1, std::memory_order_seq_cst);  // NOTE [Sleeping across processes]
      // The second look reads the doorbell itself, seq_cst: the word the parent bumps (seq_cst, after its
      // request's release store) before it reads `sleeping` (NOTE [Re-checks after the announcement]).
      if (doorbell.load(std::memory_order_seq_cst) != rung) {
        worker_->sleeping.store(0, std::memory_order_relaxed);
        polls = 0;
        continue;
      }
      futex_wait(doorbell, rung, kParentCheckUs);
      worker_->sleeping.store(0, std::memory_order_relaxed);
      if (getppid() != parent_) return -1;
      polls = 0;
    }
  }

  // The answer of env `env` (its observation columns, written from Python) is
  // complete with these: publish it (the parent is woken by the next take()).
  void finish(size_t env, double reward, bool terminated, bool truncated) {
    region_.reward(env) = reward;
    region_.set_flags(env, terminated, truncated);
    EnvControl& control = region_.env(env);
    control.failed = 0;
    publish(env, control);
  }

  // The request of env `env` raised: `text` (the traceback) is its EnvError message.
  void fail(size_t env, const std::string& text) {
    EnvControl& control = region_.env(env);
    const size_t length = std::min(text.size(), region_.layout().error_bytes);
    std::memcpy(region_.error(env), text.data(), length);
    control.error_length = static_cast<uint32_t>(length);
    control.failed = 1;
    publish(env, control);
  }

 private:
  int64_t scan(int64_t* out) {
    int64_t found = 0;
    for (size_t i = 0; i < count_; ++i) {
      const size_t env = first_ + i;
      EnvControl& control = region_.env(env);
      const uint32_t request = control.request.load(std::memory_order_acquire);
      if (request == control.done.load(std::memory_order_relaxed)) continue;
      taken_[i] = request;
      int64_t* row = out + 4 * found;
      row[0] = static_cast<int64_t>(env);
      row[1] = control.op;
      row[2] = control.seed;
      row[3] = static_cast<int64_t>(region_.action(env)[0]);  // read by Python for Discrete actions only
      ++found;
    }
    return found;
  }

  void publish(size_t env, EnvControl& control) {
    control.done.store(taken_[env - first_], std::memory_order_seq_cst);  // NOTE [Sleeping across processes]
    answered_.push_back(env);
  }

  // Only the parent clears `waiting`: were this side to clear it, a late
  // clear could erase the parent's announcement of its next sleep, which
  // would then last a whole liveness check.
  void wake_answered() {
    for (const size_t env : answered_)
      if (region_.env(env).waiting.load(std::memory_order_seq_cst) != 0) futex_wake(region_.env(env).done);
    answered_.clear();
  }

  Region region_;
  WorkerControl* worker_;
  size_t first_, count_;
  std::vector<uint32_t> taken_;
  std::vector<size_t> answered_;
  int32_t spin_polls_;
  pid_t parent_;
};

}  // namespace torchpool::process
