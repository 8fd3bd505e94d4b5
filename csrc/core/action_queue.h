// action_queue.h — the async queue of work from the Python caller to the workers.
//
// One producer (the caller, holding the GIL) pushes work items; any number of
// consumers (worker threads, and the caller itself while it waits) pop them.
// A work item names a contiguous run of env ids in a ring of ids, so a large
// batch of cheap envs becomes a few items that each run as a tight loop.
//
// Capacity: every env is in flight at most once (the executor checks this
// before pushing), so at most num_envs ids and num_envs items are ever
// outstanding, and a ring slot is reused only after the item that used it was
// received by Python. Two counters index each ring: a producer tail and a
// consumer head advanced with fetch_add; a Semaphore counts poppable items.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "wait.h"

namespace torchpool {

enum class Op : uint8_t {
  kStep,        // step the env; the result goes to the output ring
  kReset,       // reset the env (async_reset); the result goes to the output ring
  kResetInto,   // reset the env; the result goes to row `position` of the reset buffer
};

struct WorkItem {
  Op op = Op::kStep;
  uint32_t first_id = 0;   // index of the first env id in the id ring
  uint32_t count = 0;      // how many env ids
  uint32_t position = 0;   // kResetInto: row of the first env in the reset buffer
};

class ActionQueue {
 public:
  explicit ActionQueue(size_t capacity) : capacity_(capacity), ids_(capacity), items_(capacity) {}

  size_t capacity() const { return capacity_; }

  // Producer only. Pushes `count` ids as items of at most `chunk` ids each;
  // `wake` as in Semaphore::release.
  void push(Op op, const int32_t* ids, uint32_t count, uint32_t chunk, uint32_t position, bool wake) {
    uint64_t tail = item_tail_.load(std::memory_order_relaxed);
    int32_t pushed = 0;
    for (uint32_t start = 0; start < count; start += chunk) {
      WorkItem item;
      item.op = op;
      item.first_id = static_cast<uint32_t>(id_tail_ % capacity_);
      item.count = std::min(chunk, count - start);
      item.position = position + start;
      for (uint32_t i = 0; i < item.count; ++i) ids_[(id_tail_ + i) % capacity_] = ids[start + i];
      id_tail_ += item.count;
      items_[tail % capacity_] = item;
      ++tail;
      ++pushed;
    }
    // release: a consumer that sees this tail also sees the items and ids above.
    item_tail_.store(tail, std::memory_order_release);
    available_.release(pushed, wake);
  }

  // Any thread, after a successful acquire on available(). Claims the next item.
  WorkItem claim() {
    const uint64_t index = head_.fetch_add(1, std::memory_order_relaxed);
    // The semaphore guarantees the item exists, but the unit we acquired may
    // have come from an earlier push than this index's; wait for the tail
    // (acquire) so the item's contents are visible to us. Almost never spins.
    while (item_tail_.load(std::memory_order_acquire) <= index) TORCHPOOL_PAUSE();
    return items_[index % capacity_];
  }

  int32_t id(uint32_t first_id, uint32_t offset) const { return ids_[(first_id + offset) % capacity_]; }

  Semaphore& available() { return available_; }

 private:
  const size_t capacity_;
  std::vector<int32_t> ids_;
  std::vector<WorkItem> items_;
  uint64_t id_tail_ = 0;                 // producer only
  std::atomic<uint64_t> item_tail_{0};   // written by the producer
  std::atomic<uint64_t> head_{0};        // advanced by consumers
  Semaphore available_;
};

}  // namespace torchpool
