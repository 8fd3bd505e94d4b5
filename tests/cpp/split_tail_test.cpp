// split_tail_test.cpp — SplitTail (csrc/core/split_tail.h) under real threads:
// every substep of every held env runs exactly once and in order, never on
// two threads at once, the last one is marked last, and take() finds nothing
// once all are done.
//
//   c++ -O2 -std=c++20 -pthread -I csrc tests/cpp/split_tail_test.cpp -o t && ./t
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/split_tail.h"

#include "check.h"

using namespace torchpool;

// Rounds of one call each: the caller (thread 0) arms 1-6 envs of 1-5
// substeps, then it and the workers take pieces until every env's last
// substep has run. Per env: the substeps seen, and whether a thread is
// inside it (two at once is a failure).
void every_substep_runs_once_in_order() {
  constexpr int kThreads = 4, kRounds = 20000, kMaxEnvs = 6, kMaxSubsteps = 5;
  SplitTail tail;
  tail.allocate(kMaxEnvs);
  std::atomic<int> armed_round{-1};  // the round armed last
  std::atomic<int> finished{0};      // envs of the round whose last substep ran
  std::atomic<int> departures{0};    // threads that left a round, over all rounds
  std::atomic<int> seen[kMaxEnvs], inside[kMaxEnvs], lasts[kMaxEnvs];
  for (int i = 0; i < kMaxEnvs; ++i) seen[i] = 0, inside[i] = 0, lasts[i] = 0;
  auto count_of = [](int r) { return r % kMaxEnvs + 1; };
  auto substeps_of = [](int r) { return r % kMaxSubsteps + 1; };

  auto take_round = [&](int self, int r) {
    while (finished.load(std::memory_order_acquire) < count_of(r)) {
      const SplitTail::Piece piece = tail.take(self);
      if (piece.entry < 0) {
        std::this_thread::yield();
        continue;
      }
      CHECK(inside[piece.env].fetch_add(1) == 0, "round %d: env %d held by two threads", r, piece.env);
      const int substep = seen[piece.env].fetch_add(1) + 1;
      CHECK(substep <= substeps_of(r), "round %d: env %d ran substep %d of %d", r, piece.env, substep, substeps_of(r));
      CHECK(piece.last == (substep == substeps_of(r)), "round %d: env %d substep %d of %d marked last=%d", r, piece.env,
            substep, substeps_of(r), piece.last);
      inside[piece.env].fetch_sub(1);
      if (piece.last) {
        lasts[piece.env].fetch_add(1);
        tail.finish(piece);
        finished.fetch_add(1, std::memory_order_acq_rel);
      } else {
        tail.put_back(piece);
      }
    }
    departures.fetch_add(1, std::memory_order_acq_rel);
  };

  std::vector<std::thread> workers;
  for (int self = 1; self < kThreads; ++self)
    workers.emplace_back([&, self] {
      for (int r = 0; r < kRounds; ++r) {
        while (armed_round.load(std::memory_order_acquire) < r) std::this_thread::yield();
        take_round(self, r);
      }
    });
  int32_t ids[kMaxEnvs];
  for (int i = 0; i < kMaxEnvs; ++i) ids[i] = i;
  for (int r = 0; r < kRounds; ++r) {
    CHECK(!tail.has_work(), "round %d: work left over from the last round", r);
    for (int i = 0; i < kMaxEnvs; ++i) seen[i] = 0, lasts[i] = 0;
    finished.store(0, std::memory_order_release);
    tail.arm(ids, count_of(r), substeps_of(r), kThreads);
    armed_round.store(r, std::memory_order_release);
    take_round(0, r);
    // Every thread has left this round before its counts are read and reset.
    while (departures.load(std::memory_order_acquire) < (r + 1) * kThreads) std::this_thread::yield();
    for (int i = 0; i < kMaxEnvs; ++i) {
      const int expected = i < count_of(r) ? substeps_of(r) : 0;
      CHECK(seen[i] == expected, "round %d: env %d ran %d substeps, not %d", r, i, seen[i].load(), expected);
      CHECK(lasts[i] == (i < count_of(r)), "round %d: env %d finished %d times", r, i, lasts[i].load());
    }
  }
  for (auto& worker : workers) worker.join();
  std::printf("split tail: %d rounds of up to %d envs x %d substeps on %d threads\n", kRounds, kMaxEnvs, kMaxSubsteps,
              kThreads);
}

int main() {
  every_substep_runs_once_in_order();
  return 0;
}
