// threads.h — starting threads: workers pinned and named, and a job split
// over short-lived threads with the first error rethrown to the caller.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

namespace torchpool {

// Pins worker `index` to core (offset + index) mod cores (offset < 0: no
// pinning) and names it. Done by the starting thread, not the worker itself,
// so the affinity holds before the worker runs anything.
inline void pin_and_name(std::thread& worker, int64_t offset, size_t index) {
#if defined(__linux__)
  pthread_setname_np(worker.native_handle(), "torchpool");  // shows in top -H, py-spy, gdb
  if (offset < 0) return;
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  const size_t cores = std::max(1u, std::thread::hardware_concurrency());
  CPU_SET((static_cast<size_t>(offset) + index) % cores, &cpus);
  pthread_setaffinity_np(worker.native_handle(), sizeof(cpus), &cpus);
#else
  (void)worker, (void)offset, (void)index;
#endif
}

// job(i) for every i in [0, n), spread over `threads` threads (one or none:
// all on the calling thread). Rethrows the first thread's error after all
// have finished. `check` (may be empty: the caller's Ctrl-C poll) runs on the
// calling thread between jobs, or every 20 ms while other threads run them;
// when it throws, the jobs not yet begun are skipped, the threads joined, and
// its exception rethrown.
template <class Job>
void run_on_threads(size_t threads, size_t n, const Job& job, const std::function<void()>& check = nullptr) {
  if (threads < 2) {
    for (size_t i = 0; i < n; ++i) {
      if (check) check();
      job(i);
    }
    return;
  }
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> runners;
  std::string failed_start;
  std::atomic<bool> stop{false};  // relaxed: only tells runners to skip jobs; join() orders the rest
  std::mutex mutex;
  std::condition_variable all_done;
  size_t done = 0;  // runners finished, under `mutex`
  for (size_t t = 0; t < threads && failed_start.empty(); ++t) {
    try {
      runners.emplace_back([&, t] {
        try {
          for (size_t i = t; i < n && !stop.load(std::memory_order_relaxed); i += threads) job(i);
        } catch (...) {
          errors[t] = std::current_exception();
        }
        std::lock_guard<std::mutex> lock(mutex);
        ++done;
        all_done.notify_one();
      });
    } catch (const std::exception& error) {  // the started ones are joined before this throws: never terminate
      failed_start = "could not start thread " + std::to_string(t + 1) + " of " + std::to_string(threads) +
                     " to build the envs: " + error.what();
    }
  }
  std::exception_ptr stopped;
  if (check) {
    std::unique_lock<std::mutex> lock(mutex);
    while (done < runners.size()) {
      if (all_done.wait_for(lock, std::chrono::milliseconds(20), [&] { return done == runners.size(); })) break;
      lock.unlock();
      try {
        check();
      } catch (...) {
        stopped = std::current_exception();
        stop.store(true, std::memory_order_relaxed);
      }
      lock.lock();
      if (stopped) break;
    }
  }
  for (auto& runner : runners) runner.join();
  if (stopped) std::rethrow_exception(stopped);
  if (!failed_start.empty()) throw std::runtime_error(failed_start);
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace torchpool
