// split_tail.h — the last envs of a sync step, advanced one substep at a time
// by whichever thread is free.
//
// NOTE [Split tail]. Threads that take whole envs from the queues finish a
// sync step unevenly: once the queues are empty, the env a thread claimed
// last runs on alone while the other cores wait out what is left of it (up
// to one env step, a large share of a sync call of a few MuJoCo envs). A family whose step is a run of substeps
// (Env::advance, one of them per call: MuJoCo's frame_skip mj_steps) lets the executor hold k envs back from the
// queues; once the queues are empty every thread takes the held env with the most substeps left that no other thread
// holds, runs one substep, and puts it back, so the call ends within about one substep on every core. The last substep
// of each env runs inside its ordinary step, which writes the row. Results are bit-identical: the same substeps run in
// the same order, only on another thread. What it gains is measured in
// docs/performance.md ("Code choices and their measurements").
//
// Each entry is one atomic word: the substeps left (0: done or unused), plus
// kHeld while a thread works on it. A thread's acquire of the word sees the
// env as the previous holder left it (its release), and the caller's arm()
// publishes the actions, copied before it.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

namespace torchpool {

class SplitTail {
 public:
  static constexpr int32_t kHeld = 1 << 30;

  // Room for `capacity` held envs (the plan's split_tail_size); before any thread uses the tail.
  void allocate(size_t capacity) { entries_.reset(new Entry[capacity]); }

  struct Piece {
    int32_t entry = -1;  // -1: nothing to take now
    int32_t env = -1;
    bool last = false;  // the env's last substep: finish(), then run its step (which writes the row)
  };

  // Caller, before the push that wakes the workers: the envs of this call
  // held back, each with `substeps` substeps to go, spread over `threads`
  // home threads (0 is the caller). Every entry of the last call is done
  // (its row was received).
  void arm(const int32_t* ids, size_t count, int32_t substeps, size_t threads) {
    for (size_t i = 0; i < count; ++i) {
      entries_[i].env.store(ids[i], std::memory_order_relaxed);
      entries_[i].home.store(static_cast<int32_t>(i % threads), std::memory_order_relaxed);
      entries_[i].left.store(substeps, std::memory_order_release);
    }
    armed_count_.store(static_cast<int32_t>(count), std::memory_order_release);
  }

  // Any thread: whether take() could find something now.
  bool has_work() const {
    const int32_t count = armed_count_.load(std::memory_order_acquire);
    for (int32_t i = 0; i < count; ++i) {
      if (takeable(entries_[i].left.load(std::memory_order_relaxed))) return true;
    }
    return false;
  }

  // Thread `self`: holds the free entry with the most substeps left, counting
  // one more for its own (home) entries. The bias keeps each env on one core
  // (its state in that core's cache, call after call) until another thread's
  // env is 2 substeps behind; without it the threads swapped envs at every
  // substep and lost against whole steps (docs/performance.md).
  Piece take(int32_t self) {
    const int32_t count = armed_count_.load(std::memory_order_acquire);
    while (true) {
      int32_t best = -1, best_left = 0, best_score = 0;
      for (int32_t i = 0; i < count; ++i) {
        // acquire: an entry armed meanwhile shows its `home` (written before `left`).
        const int32_t left = entries_[i].left.load(std::memory_order_acquire);
        if (!takeable(left)) continue;
        const int32_t score = left + (entries_[i].home.load(std::memory_order_relaxed) == self ? 1 : 0);
        if (score > best_score) best = i, best_left = left, best_score = score;
      }
      if (best < 0) return {};
      int32_t expected = best_left;
      if (entries_[best].left.compare_exchange_strong(expected, best_left | kHeld, std::memory_order_acquire,
                                                      std::memory_order_relaxed))
        return {best, entries_[best].env.load(std::memory_order_relaxed), best_left == 1};
    }
  }

  // The holder, after running one substep that was not the last.
  void put_back(const Piece& piece) {
    Entry& entry = entries_[piece.entry];
    entry.left.store((entry.left.load(std::memory_order_relaxed) & ~kHeld) - 1, std::memory_order_release);
  }

  // The holder of the last substep, before running the step that writes the
  // row (or before counting the row of an env given up on an error).
  void finish(const Piece& piece) { entries_[piece.entry].left.store(0, std::memory_order_release); }

 private:
  // Substeps left and no thread holding the entry.
  static bool takeable(int32_t left) { return left > 0 && !(left & kHeld); }

  // env and home are written by arm() before `left` (release) and read after
  // an acquire of it; atomic (relaxed) because take() also reads `home` of an
  // entry it then fails to claim, which arm() may be rewriting for the next
  // call (found by ThreadSanitizer; the score read there is only a hint).
  struct Entry {
    std::atomic<int32_t> left{0};
    std::atomic<int32_t> env{-1};
    std::atomic<int32_t> home{0};
  };

  std::unique_ptr<Entry[]> entries_;
  std::atomic<int32_t> armed_count_{0};
};

}  // namespace torchpool
