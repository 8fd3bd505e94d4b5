// action_queue_stress.cpp — ActionQueue alone, hammered by more consumer
// threads than cores, to catch a slot reused before its consumer read it
// (NOTE [Slot reuse] in csrc/core/action_queue.h).
//
// The producer keeps every env cycling: it pushes the envs the consumers have
// finished, in random runs and chunk sizes. Each consumer checks that every
// env it pops was pushed and not yet popped (flag 1 -> 0); at the end the
// producer stops pushing and waits for every env pushed to be popped. Exits 1
// with a message on a duplicated or lost env.
//
//   c++ -O2 -pthread -I csrc tests/cpp/action_queue_stress.cpp -o stress && ./stress SECONDS THREADS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "core/action_queue.h"

using namespace torchpool;

int main(int argc, char** argv) {
  const double seconds = argc > 1 ? std::atof(argv[1]) : 3.0;
  const int num_consumers = argc > 2 ? std::atoi(argv[2]) : 6;
  constexpr int kNumEnvs = 8;

  ActionQueue queue(kNumEnvs);
  std::vector<std::atomic<int>> in_flight(kNumEnvs);
  std::mutex done_mutex;
  std::vector<int32_t> done;  // envs popped, waiting to be pushed again
  std::atomic<bool> stop{false}, failed{false};
  std::atomic<uint64_t> popped{0};

  auto consume = [&] {
    SpinPolicy spin;
    spin.polls = 50;
    while (queue.available().acquire(spin, [&] { return stop.load(); })) {
      if (stop.load()) return;
      const WorkItem item = queue.claim();
      int32_t env = item.first_env;
      for (uint32_t i = 0; i < item.count; ++i) {
        const int32_t following = i + 1 < item.count ? queue.next_env(env) : -1;
        if (env < 0 || env >= kNumEnvs || in_flight[env].exchange(0) != 1) {
          std::fprintf(stderr, "env %d popped without being in flight (duplicated or corrupt item)\n", env);
          failed = true;
          stop = true;
          return;
        }
        {
          std::lock_guard<std::mutex> lock(done_mutex);
          done.push_back(env);
        }
        popped.fetch_add(1);
        env = following;
      }
    }
  };

  std::vector<std::thread> consumers;
  for (int i = 0; i < num_consumers; ++i) consumers.emplace_back(consume);

  std::mt19937 rng(12345);
  std::vector<int32_t> ids(kNumEnvs);
  for (int32_t env = 0; env < kNumEnvs; ++env) ids[env] = env, in_flight[env] = 1;
  queue.push(Op::kStep, ids.data(), kNumEnvs, 1, 0, true);

  const auto start = std::chrono::steady_clock::now();
  while (!stop.load()) {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - start).count() > seconds) break;
    std::vector<int32_t> ready;
    {
      std::lock_guard<std::mutex> lock(done_mutex);
      ready.swap(done);
    }
    std::shuffle(ready.begin(), ready.end(), rng);
    size_t next = 0;
    while (next < ready.size()) {  // random runs, each pushed with a random chunk size
      const uint32_t count = std::min<uint32_t>(1 + rng() % 3, static_cast<uint32_t>(ready.size() - next));
      for (uint32_t i = 0; i < count; ++i) in_flight[ready[next + i]] = 1;
      queue.push(Op::kStep, ready.data() + next, count, 1 + rng() % 2, 0, true);
      next += count;
    }
  }
  // Every env pushed comes out: the consumers pop what is queued. A lost item's
  // envs never do; the deadline is only there to end the test then.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  auto still_in_flight = [&] {
    return std::any_of(in_flight.begin(), in_flight.end(), [](const std::atomic<int>& flag) { return flag.load(); });
  };
  while (!failed.load() && still_in_flight() && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  const bool duplicated = failed.load();  // then the consumers stopped early, and envs are left in flight
  for (int32_t env = 0; env < kNumEnvs && !duplicated; ++env) {
    if (in_flight[env].load()) {
      std::fprintf(stderr, "env %d was pushed and never popped (a lost item)\n", env);
      failed = true;
    }
  }
  stop = true;
  queue.available().release(num_consumers);
  for (std::thread& consumer : consumers) consumer.join();
  std::printf("%llu envs popped by %d consumers\n", static_cast<unsigned long long>(popped.load()), num_consumers);
  return failed ? 1 : 0;
}
