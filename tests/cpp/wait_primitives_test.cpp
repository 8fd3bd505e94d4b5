// wait_primitives_test.cpp — Semaphore and FillCounter (csrc/core/wait.h,
// output_ring.h) under real threads: no unit lost or duplicated, no waiter
// left asleep once its target is reached (a lost wake-up shows as a sleep
// that ran out its timeout although the target was reached meanwhile).
//
//   c++ -O2 -std=c++20 -pthread -I csrc tests/cpp/wait_primitives_test.cpp -o t && ./t
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "core/output_ring.h"
#include "core/wait.h"

#include "check.h"

using namespace torchpool;

// Producers release units in bursts, with and without wake-ups; consumers
// (more than cores, some sleeping) acquire every one of them exactly once.
void semaphore_hands_out_every_unit_once() {
  Semaphore semaphore;
  constexpr int kProducers = 2, kConsumers = 5, kUnitsEach = 200000;
  std::atomic<int64_t> acquired{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> consumers;
  for (int c = 0; c < kConsumers; ++c)
    consumers.emplace_back([&, c] {
      const SpinPolicy spin{c % 2 ? 0 : 500};  // some sleep at once, some spin first
      while (semaphore.acquire(spin, [&] { return stop.load(); })) acquired.fetch_add(1);
    });
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p)
    producers.emplace_back([&, p] {
      for (int i = 0; i < kUnitsEach;) {
        const int burst = 1 + (i * 7 + p) % 5;
        semaphore.release(burst, /*wake=*/true);
        i += burst;
      }
    });
  for (auto& producer : producers) producer.join();
  const int64_t released = [] {
    int64_t total = 0;
    for (int p = 0; p < kProducers; ++p)
      for (int i = 0; i < kUnitsEach;) {
        const int burst = 1 + (i * 7 + p) % 5;
        total += burst;
        i += burst;
      }
    return total;
  }();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (acquired.load() < released && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  CHECK(acquired.load() == released, "acquired %lld of %lld units", (long long)acquired.load(), (long long)released);
  CHECK(!semaphore.has_units(), "units left over");
  stop.store(true);
  semaphore.release(kConsumers);  // units with no work wake the sleepers; they see stop
  for (auto& consumer : consumers) consumer.join();
  std::printf("semaphore: %lld units, each acquired once\n", (long long)released);
}

// Workers add rows to a counter in random pieces; the caller waits for each
// round's target (spinning a little, then sleeping) and clears it.
void fill_counter_wakes_its_waiter() {
  FillCounter counter;
  constexpr int kRounds = 20000, kTarget = 64, kWorkers = 3;
  std::atomic<int> round{-1};
  std::atomic<int> done_adding{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w)
    workers.emplace_back([&, w] {
      for (int r = 0; r < kRounds; ++r) {
        while (round.load(std::memory_order_acquire) < r) std::this_thread::yield();
        // Worker w adds its share of this round's rows, in pieces of 1..3.
        int share = kTarget / kWorkers + (w < kTarget % kWorkers ? 1 : 0);
        while (share > 0) {
          const int piece = std::min(share, 1 + (r + w + share) % 3);
          counter.add(piece, kTarget);
          share -= piece;
        }
        done_adding.fetch_add(1);
      }
    });
  int lost_wake_ups = 0, starved = 0;
  for (int r = 0; r < kRounds; ++r) {
    round.store(r, std::memory_order_release);
    while (!counter.reached(kTarget)) {
      // After a lost wake-up, short sleeps: the test fails all the same, but soon.
      if (counter.sleep(kTarget, lost_wake_ups ? 1000 : 200000)) continue;
      // Slept out the timeout.
      if (counter.reached(kTarget))
        ++lost_wake_ups;  // the add() that reached the target woke nobody
      else
        ++starved;  // the workers were preempted that long (a busy machine)
    }
    while (done_adding.load() < (r + 1) * kWorkers) std::this_thread::yield();  // no add left in flight
    counter.clear();
  }
  for (auto& worker : workers) worker.join();
  CHECK(lost_wake_ups == 0, "%d sleeps (in %d rounds) ran out their timeout after the target was reached",
        lost_wake_ups, kRounds);
  std::printf("fill counter: %d rounds, no wake-up lost (%d sleeps timed out before the target)\n", kRounds, starved);
}

int main() {
  semaphore_hands_out_every_unit_once();
  fill_counter_wakes_its_waiter();
  return 0;
}
