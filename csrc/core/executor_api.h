// executor_api.h — what the bindings see of an executor: its options and a
// type-erased interface (the family type is erased here; executor.h holds
// the one implementation, Executor<Env>).
//
// Every call is made by one caller thread (bindings.cpp guards that). Each
// send-like call either throws InputError before anything is queued or queues
// all of its rows; a blocking call polls `check` while it sleeps and leaves
// no work behind when it throws (NOTE [Interrupted calls] in executor.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "episode.h"
#include "errors.h"
#include "output_ring.h"
#include "schedule.h"
#include "spec.h"
#include "wait.h"

namespace torchpool {

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
  uint32_t schedule_off = 0;   // ScheduleOff bits: modes switched off (benchmarks/schedule_ab.py)
  InterruptCheck build_check;  // the caller's Ctrl-C poll while the envs are built (may be empty)
};

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
  // Sync step of some envs (none in flight): their rows land in the reset buffer in `ids` order, and it
  // waits for them, as reset() does. What EnvPool's step(action, env_id) does on a sync pool.
  virtual void step_some(const void* actions, Dtype dtype, const int64_t* ids, size_t count,
                         const InterruptCheck& check) = 0;
  // Whether the next call must first finish a call a second Ctrl-C abandoned
  // (NOTE [Interrupted calls]), which waits up to one env step per thread;
  // settle() does that alone, so the bindings can poll for Ctrl-C meanwhile.
  virtual bool must_settle() const = 0;
  virtual void settle(const InterruptCheck& check) = 0;
  // Python calls this when KeyboardInterrupt surfaced right after recv()
  // returned, before the batch reached the user: the batch becomes the next
  // recv()'s again. Only right after a recv(); false (nothing done) otherwise.
  virtual bool undo_recv() = 0;
  virtual uint64_t rows_sent() const = 0;
  virtual uint64_t rows_received() const = 0;
  // Rows sent and not yet received, less those of an abandoned call (dropped
  // whole once settled): what recv() may still return.
  virtual uint64_t in_flight() const = 0;
  // The ring block the next batch received lands in.
  virtual size_t next_block() const = 0;
  // In a child of fork(): the workers exist only in the parent, so they are
  // neither stopped nor joined; their handles are leaked.
  virtual void forget_threads() = 0;
  // Whether a push of `count` envs wakes the workers, so the envs step while
  // the caller does something else; if not, the caller steps them in step()/recv().
  virtual bool wakes_workers(size_t count) const = 0;
  // The plan the executor runs (schedule.h).
  virtual const Schedule& schedule() const = 0;
  virtual std::vector<double> get_state(size_t env_id) const = 0;
  virtual void set_state(size_t env_id, const std::vector<double>& state) = 0;
  // Whether the family's state can be read and written (get_state/set_state).
  virtual bool has_state() const = 0;
  // Whether the family renders, and env `env_id`'s screen (an idle env only).
  virtual bool renders() const = 0;
  virtual std::vector<int64_t> render(size_t env_id, std::vector<uint8_t>& pixels) const = 0;
  virtual void close() = 0;
};

}  // namespace torchpool
