// action_queue.h — the async queue of work from the Python caller to the workers.
//
// One producer (the caller, holding the GIL) pushes work items; any number of
// consumers (worker threads, and the caller itself while it waits) pop them.
// A work item names a run of envs: its first env id and a count, the rest
// following through a per-env `next_env` link, so a large batch of cheap envs
// becomes a few items that each run as a tight loop.
//
// NOTE [Slot reuse]: items live in a ring of num_envs slots, each with a
// sequence number (Vyukov's bounded queue). A consumer claims an index with
// one fetch_add and copies the item out when the slot's sequence says it is
// published; only then may the producer write the slot again. Without the
// sequence, a consumer preempted between its claim and its read (a VM does
// this for milliseconds) found its slot rewritten by a later push once the
// other envs had cycled through the ring: it stepped the later item's envs a
// second time and lost its own (seen as one env twice in a batch on
// HalfCheetah-v5, 8 envs / batch 3, 2 cores). The per-env links need no such
// guard: an env is in flight at most once (the executor checks this before
// pushing), and a consumer reads an env's link before stepping it, so the
// link is read before Python can receive the env and push it again.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "wait.h"

namespace torchpool {

enum class Op : uint8_t {
  kStep,       // step the env; the result goes to the output ring
  kReset,      // reset the env (async_reset); the result goes to the output ring
  kResetInto,  // reset the env; the result goes to row `position` of the reset buffer
  kStepInto,   // step the env; the result goes to row `position` of the reset buffer (step_some)
};

struct WorkItem {
  Op op = Op::kStep;
  int32_t first_env = 0;  // the item's first env id; next_env() gives the others
  uint32_t count = 0;     // how many env ids
  uint32_t position = 0;  // kResetInto, kStepInto: row of the first env in the reset buffer
};

class ActionQueue {
 public:
  explicit ActionQueue(size_t num_envs) : capacity_(num_envs), next_env_(num_envs, -1), slots_(new Slot[num_envs]) {
    for (size_t i = 0; i < capacity_; ++i) slots_[i].sequence.store(i, std::memory_order_relaxed);
  }

  // Producer only. Pushes `count` ids as items of at most `chunk` ids each;
  // `wake` as in Semaphore::release.
  void push(Op op, const int32_t* ids, uint32_t count, uint32_t chunk, uint32_t position, bool wake) {
    int32_t pushed = 0;
    for (uint32_t start = 0; start < count; start += chunk) {
      WorkItem item;
      item.op = op;
      item.first_env = ids[start];
      item.count = std::min(chunk, count - start);
      item.position = position + start;
      for (uint32_t i = 0; i + 1 < item.count; ++i) next_env_[ids[start + i]] = ids[start + i + 1];
      Slot& slot = slots_[tail_ % capacity_];
      // The slot's previous item has been claimed (at most num_envs items are
      // outstanding), but its consumer may not have copied it out yet.
      while (slot.sequence.load(std::memory_order_acquire) != tail_) TORCHPOOL_PAUSE();
      slot.item = item;
      // release: a consumer that sees this sequence also sees the item and the links above.
      slot.sequence.store(tail_ + 1, std::memory_order_release);
      ++tail_;
      ++pushed;
    }
    available_.release(pushed, wake);
  }

  // Any thread, after a successful acquire on available(). Claims the next item.
  WorkItem claim() {
    const uint64_t index = head_.fetch_add(1, std::memory_order_relaxed);
    Slot& slot = slots_[index % capacity_];
    // The semaphore guarantees the item is pushed, but the unit we acquired
    // may have come from an earlier push than this index's. Almost never spins.
    while (slot.sequence.load(std::memory_order_acquire) != index + 1) TORCHPOOL_PAUSE();
    const WorkItem item = slot.item;
    slot.sequence.store(index + capacity_, std::memory_order_release);  // NOTE [Slot reuse]
    return item;
  }

  // The env after `env` in its item. Read it before stepping `env` (NOTE [Slot reuse]).
  int32_t next_env(int32_t env) const { return next_env_[env]; }

  Semaphore& available() { return available_; }

 private:
  struct Slot {
    std::atomic<uint64_t> sequence{0};  // == index + 1: item `index` is published; == index: free for it
    WorkItem item;
  };

  const size_t capacity_;
  std::vector<int32_t> next_env_;  // written by the producer for envs not in flight
  std::unique_ptr<Slot[]> slots_;
  uint64_t tail_ = 0;              // producer only
  std::atomic<uint64_t> head_{0};  // advanced by consumers
  Semaphore available_;
};

}  // namespace torchpool
