// wait.h — spin-then-sleep waiting on a 32-bit atomic, and a counting semaphore.
//
// On the VMs we run on, waking a sleeping thread costs about as much as a
// whole batch of CartPole steps, so every waiter first spins for a bounded
// number of polls and only then sleeps in the kernel (futex on Linux). Sleeps
// are bounded by a timeout so a waiting caller can poll for Ctrl-C.
#pragma once

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <thread>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#if defined(__x86_64__) || defined(_M_X64)
#include <immintrin.h>
#define TORCHPOOL_PAUSE() _mm_pause()
#elif defined(__aarch64__)
#define TORCHPOOL_PAUSE() asm volatile("yield")
#else
#define TORCHPOOL_PAUSE() ((void)0)
#endif

namespace torchpool {

static_assert(sizeof(std::atomic<int32_t>) == sizeof(int32_t), "futex needs a plain 32-bit word");

// Sleeps while *word == expected, at most timeout_us (a spurious early return
// is fine: every caller re-checks its condition). False when it slept out the
// whole timeout, woken by nobody.
inline bool sleep_while_equal(std::atomic<int32_t>& word, int32_t expected, int64_t timeout_us) {
#if defined(__linux__)
  timespec timeout{static_cast<time_t>(timeout_us / 1000000), static_cast<long>((timeout_us % 1000000) * 1000)};
  const long result =
      syscall(SYS_futex, reinterpret_cast<int32_t*>(&word), FUTEX_WAIT_PRIVATE, expected, &timeout, nullptr, 0);
  return result == 0 || errno != ETIMEDOUT;
#else
  if (word.load(std::memory_order_acquire) == expected)
    std::this_thread::sleep_for(std::chrono::microseconds(std::min<int64_t>(timeout_us, 50)));
  return true;
#endif
}

inline void wake_sleepers(std::atomic<int32_t>& word, int32_t count) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<int32_t*>(&word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
#else
  (void)word, (void)count;
#endif
}

// How long waiters poll before sleeping. Tuned with benchmarks/spin.py.
struct SpinPolicy {
  int32_t polls = 2000;  // ~ tens of microseconds of _mm_pause
};

// NOTE [Re-checks after the announcement]. A sleeper announces itself (a
// seq_cst store or RMW), looks at its condition once more, and sleeps only if
// it still does not hold; the other side changes the condition (seq_cst) and
// then reads the announcement (seq_cst). That is the store-buffering shape:
// the C++ model forbids "both miss" only when all four accesses are seq_cst,
// so the sleeper's second look is a seq_cst load of the very word the other
// side changes. A relaxed or acquire second look may read a stale value on
// AArch64 (a plain or acquire load may be satisfied before the earlier
// store-release is visible) though never on x86 (locked RMWs and xchg stores
// drain the store buffer); the futex's own compare in the kernel, after a
// full barrier, would still catch it, but the C++ argument should stand on
// its own. On x86 a seq_cst load is a plain mov, on AArch64 the same LDAR an
// acquire load is. docs/memory_ordering.md has the review and the litmus runs.
//
// A counting semaphore whose waiters spin before they sleep. Releases skip the
// wake-up syscall when nobody sleeps, so the fast path is two atomics.
class Semaphore {
 public:
  // wake=false leaves sleeping waiters asleep (spinning ones still see the
  // units): for work so cheap that a wake-up would cost more than doing it,
  // provided someone else (the caller) is sure to acquire the units.
  void release(int32_t n, bool wake = true) {
    // seq_cst pairs with the seq_cst increment of sleepers_ in acquire(): either
    // the releaser sees the sleeper, or the sleeper sees the new count.
    count_.fetch_add(n, std::memory_order_seq_cst);
    if (wake && sleepers_.load(std::memory_order_seq_cst) > 0) wake_sleepers(count_, n);
  }

  // `look`: the order of the first look at the count (NOTE [Re-checks after the announcement]).
  bool try_acquire(std::memory_order look = std::memory_order_relaxed) {
    int32_t current = count_.load(look);
    while (current > 0) {
      // acquire: what the producer wrote before release() is visible after.
      if (count_.compare_exchange_weak(current, current - 1, std::memory_order_acquire, std::memory_order_relaxed))
        return true;
    }
    return false;
  }

  // Blocks until a unit is acquired or should_stop() is true (returns false then).
  template <class StopFn>
  bool acquire(const SpinPolicy& spin, StopFn&& should_stop) {
    for (int32_t i = 0; i < spin.polls; ++i) {
      if (try_acquire()) return true;
      TORCHPOOL_PAUSE();
    }
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (true) {
      if (try_acquire(std::memory_order_seq_cst)) break;
      if (should_stop()) {
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        return false;
      }
      sleep_while_equal(count_, 0, 100000);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return true;
  }

  // A peek: whether try_acquire() would find a unit now.
  bool has_units() const { return count_.load(std::memory_order_relaxed) > 0; }

 private:
  std::atomic<int32_t> count_{0};
  std::atomic<int32_t> sleepers_{0};
};

}  // namespace torchpool
