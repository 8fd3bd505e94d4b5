// threads.h — starting threads: workers pinned and named, and a job split
// over short-lived threads with the first error rethrown to the caller.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
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
// have finished.
template <class Job>
void run_on_threads(size_t threads, size_t n, const Job& job) {
  if (threads < 2) {
    for (size_t i = 0; i < n; ++i) job(i);
    return;
  }
  std::vector<std::exception_ptr> errors(threads);
  std::vector<std::thread> runners;
  std::string failed_start;
  for (size_t t = 0; t < threads && failed_start.empty(); ++t) {
    try {
      runners.emplace_back([&, t] {
        try {
          for (size_t i = t; i < n; i += threads) job(i);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    } catch (const std::exception& error) {  // the started ones are joined before this throws: never terminate
      failed_start = "could not start thread " + std::to_string(t + 1) + " of " + std::to_string(threads) +
                     " to build the envs: " + error.what();
    }
  }
  for (auto& runner : runners) runner.join();
  if (!failed_start.empty()) throw std::runtime_error(failed_start);
  for (auto& error : errors)
    if (error) std::rethrow_exception(error);
}

}  // namespace torchpool
