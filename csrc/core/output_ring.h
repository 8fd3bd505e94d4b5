// output_ring.h — where results go: K blocks of batch_size rows in caller-owned memory.
//
// Python allocates each block as one byte buffer (pinned when CUDA is present)
// and hands its address here; every output field is a column inside it, so a
// block is a batch of tensors with no copy. Workers claim rows in completion
// order with one fetch_add per work item; row r lands in block (r / batch_size)
// % K. When a block has all its rows it is complete, and recv() hands it out.
//
// Reuse: block b's rows come round again only after K * batch_size more rows
// are claimed. Python keeps K * batch_size > num_envs + batch_size, so rows in
// flight never reach a block before Python has received it, and Python swaps
// in a fresh buffer for a block the user still holds (NOTE [Output ring reuse]
// in torchpool/_held.py).
#pragma once

#include <array>
#include <atomic>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "spec.h"
#include "wait.h"

namespace torchpool {

constexpr size_t kMaxFields = 64;  // 2 x kMaxObservationFields + the scalars + kMaxExtras

// Where each field of a block's rows is written: field i of row r at
// address[i] + r * row_stride[i]. A block made from one buffer has Layout's
// columns (Layout::targets); a caller may instead point each field anywhere,
// e.g. at column t of a [rows, T, ...] rollout tensor, so that each row lands
// where it is finally read and nothing is copied after the step.
struct FieldTargets {
  std::array<uint8_t*, kMaxFields> address{};
  std::array<size_t, kMaxFields> row_stride{};

  uint8_t* at(size_t field, size_t row) const { return address[field] + row * row_stride[field]; }
};

// Column layout of one block: field i of row r is at
// base + offset(i) + r * fields[i].row_bytes().
class Layout {
 public:
  Layout(std::vector<FieldSpec> fields, size_t rows) : fields_(std::move(fields)) {
    if (fields_.size() > kMaxFields) throw std::logic_error("too many output fields");
    size_t offset = 0;
    for (const FieldSpec& field : fields_) {
      offsets_.push_back(offset);
      row_bytes_.push_back(field.row_bytes());
      // 64-byte columns: aligned for any dtype and no false sharing between columns.
      offset += (field.row_bytes() * rows + 63) / 64 * 64;
    }
    bytes_ = std::max<size_t>(offset, 64);
  }

  const std::vector<FieldSpec>& fields() const { return fields_; }
  size_t offset(size_t field) const { return offsets_[field]; }
  size_t row_bytes(size_t field) const { return row_bytes_[field]; }
  size_t bytes() const { return bytes_; }

  FieldTargets targets(uint8_t* base) const {
    FieldTargets targets;
    for (size_t i = 0; i < fields_.size(); ++i) {
      targets.address[i] = base + offsets_[i];
      targets.row_stride[i] = row_bytes_[i];
    }
    return targets;
  }

 private:
  std::vector<FieldSpec> fields_;
  std::vector<size_t> offsets_, row_bytes_;
  size_t bytes_ = 0;
};

// Counts the rows written into one buffer; the caller waits for a target.
class FillCounter {
 public:
  // Worker: `count` more rows are written.
  void add(int32_t count, int32_t target) {
    // seq_cst (not just release): pairs with the waiter's seq_cst store of
    // waiting_ so one of the two always sees the other (no lost wake-up).
    const int32_t now = filled_.fetch_add(count, std::memory_order_seq_cst) + count;
    if (now == target && waiting_.load(std::memory_order_seq_cst)) wake_sleepers(filled_, 1);
  }

  // acquire: the rows' contents are visible once the count reaches the target.
  bool reached(int32_t target) const { return filled_.load(std::memory_order_acquire) == target; }

  // Caller: sleeps (bounded) until the target might be reached. False when it
  // slept out the whole timeout: had the target been reached meanwhile, its
  // wake-up was lost (tests/cpp/wait_primitives_test.cpp counts those).
  bool sleep(int32_t target, int64_t timeout_us) {
    waiting_.store(true, std::memory_order_seq_cst);
    const int32_t seen = filled_.load(std::memory_order_seq_cst);
    const bool woken = seen == target || sleep_while_equal(filled_, seen, timeout_us);
    waiting_.store(false, std::memory_order_relaxed);
    return woken;
  }

  // Caller, once the buffer was handed out. The next rows are pushed after
  // this (queue release), so relaxed is enough.
  void clear() { filled_.store(0, std::memory_order_relaxed); }

  // Caller: undoes clear() of a complete buffer (ExecutorBase::undo_recv).
  void restore(int32_t target) { filled_.store(target, std::memory_order_relaxed); }

 private:
  std::atomic<int32_t> filled_{0};
  std::atomic<bool> waiting_{false};
};

// K blocks of batch_size rows, and the claim counter for rows.
class OutputRing {
 public:
  OutputRing(size_t num_blocks, size_t batch_size)
      : batch_size_(batch_size), targets_(num_blocks), filled_(new FillCounter[num_blocks]) {}

  size_t num_blocks() const { return targets_.size(); }

  // Python points a block's fields before pushing work whose rows land in it;
  // the queue's release/acquire publishes the pointers to workers.
  void set_targets(size_t block, const FieldTargets& targets) { targets_[block] = targets; }
  const FieldTargets& targets(size_t block) const { return targets_[block]; }

  // Claims `count` consecutive row numbers. relaxed: only uniqueness matters;
  // what the rows hold is published by FillCounter::add.
  uint64_t claim_rows(uint32_t count) { return next_row_.fetch_add(count, std::memory_order_relaxed); }
  size_t block_of(uint64_t row) const { return (row / batch_size_) % targets_.size(); }
  size_t row_in_block(uint64_t row) const { return row % batch_size_; }

  FillCounter& filled(size_t block) { return filled_[block]; }
  int32_t target() const { return static_cast<int32_t>(batch_size_); }

 private:
  const size_t batch_size_;
  std::vector<FieldTargets> targets_;
  std::unique_ptr<FillCounter[]> filled_;
  std::atomic<uint64_t> next_row_{0};
};

}  // namespace torchpool
