// shared_region.h — the memory a process pool shares with its worker processes.
//
// Contract: one region per pool, a memfd the parent maps and passes to every
// worker process (torchpool/_workers/). It holds, per env, a control word pair
// (request, done): the parent bumps `request` after writing the op, seed and
// action; the worker that owns the env steps its Python env, writes the
// result columns and error text, then stores `done = request` (release).
// Nothing else on the hot path crosses the process boundary: no pipe, no
// pickle. Each side sleeps on a futex word of the other only when it has
// nothing to do (NOTE [Sleeping across processes]). The layout is computed
// here once and handed to Python as byte offsets, so both processes agree.
//
// Linux only: shared futexes, waitid(WNOWAIT).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#if defined(__linux__)
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace torchpool::process {

inline constexpr uint32_t kOpReset = 1;
inline constexpr uint32_t kOpStep = 2;
inline constexpr uint32_t kMagic = 0x74706f6c;  // "tpol"

// One cache line per env: the parent and the env's worker write it in turn.
struct alignas(64) EnvControl {
  std::atomic<uint32_t> request{0};  // parent: bumped by each begin()
  std::atomic<uint32_t> done{0};     // worker: set to request once the result is written
  std::atomic<uint32_t> waiting{0};  // parent: 1 while it sleeps on `done`
  uint32_t op = 0;                   // kOpReset / kOpStep, written before request
  int64_t seed = -1;                 // a reset's seed, or -1 (none: the env continues its stream)
  uint32_t failed = 0;               // worker: the request raised; its traceback is in the errors area
  uint32_t error_length = 0;
};

// One cache line per worker process.
struct alignas(64) WorkerControl {
  std::atomic<uint32_t> doorbell{0};      // parent: bumped by each begin() of one of the worker's envs
  std::atomic<uint32_t> sleeping{0};      // worker: 1 while it sleeps on the doorbell
  std::atomic<int32_t> pid{0};            // parent (the supervisor): the worker process now serving
  std::atomic<uint32_t> generation{0};    // parent: bumped when the supervisor finds the worker dead
  std::atomic<int32_t> exit_status{0};    // parent: the dead worker's status, as Python's returncode
  uint32_t first_env = 0, env_count = 0;  // the envs it steps
};

// NOTE [Answers in the caller]. For envs too cheap to ship to another
// process, the pool has no worker: the parent writes a function of its own
// (a ctypes callback into torchpool/_workers/in_caller.py) here. begin()
// then rings no doorbell, and an env that finds its request unanswered calls
// it, in the thread that collects: it answers every request waiting at that
// moment exactly as a worker's loop would (WorkerChannel on the parent's own
// mapping), so a whole push costs one call, not one per env. An address in
// the parent's memory: only the parent reads it, and no worker maps a
// region that has one.
using AnswerInCaller = void (*)(int64_t env);

struct alignas(64) RegionHeader {
  uint32_t magic = kMagic;
  std::atomic<uint32_t> shutdown{0};  // parent: workers exit when they see it
  uint32_t step_timeout_ms = 0;       // parent, before any request: the pool's step_timeout (0: none)
  // parent (a Python thread): bumped by each Ctrl-C, NOTE [Ctrl-C while workers step]
  std::atomic<uint32_t> interrupts{0};
  AnswerInCaller answer_in_caller = nullptr;  // parent, before any request: NOTE [Answers in the caller]
};

// NOTE [Step timeout]. The parent's supervisor thread
// (torchpool/_workers/supervisor.py) watches each env's (request, done) pair;
// a request unanswered for the pool's step_timeout gets its worker killed.
// Before the kill it records the worker's exit status as kStoppedForTimeout
// plus the env's id (and again once it reaps it), so the envs waiting on that
// worker say why it died rather than "killed by signal 9".
inline constexpr int32_t kStoppedForTimeout = 1 << 30;

// NOTE [Ctrl-C while workers step]. The calling thread collects the workers'
// answers inside the core's call, where no Python signal handler runs, and
// workers ignore SIGINT: an env stuck in its step would hold Ctrl-C off until
// the step timeout. So a Python thread of the parent
// (torchpool/_workers/interrupts.py) hears each SIGINT through Python's
// signal wake-up fd and bumps `interrupts`. A bump counts for every request
// sent before it (ProcessEnv::begin keeps the count), even one whose env is
// not yet waited for (it queues behind another env of its worker). Envs keep
// waiting until kInterruptGraceUs after the bump was first seen by any env of
// the pool (ProcessModel::interrupt_seen: one deadline for the whole call,
// however many envs hang; steps under way normally answer within it, and the
// call then raises KeyboardInterrupt as before); past that each gives its
// answer up: the step fails (its env resets, NOTE [Lost answers]), the call
// returns, and Python raises the KeyboardInterrupt it has pending.
inline constexpr int64_t kInterruptGraceUs = 1000000;

// NOTE [Sleeping across processes]. Futex words in a MAP_SHARED mapping are
// keyed by their page, not by the address, so the two processes wait and wake
// through their own mappings (no FUTEX_PRIVATE_FLAG). The lost-wake-up race is
// closed the usual way: the sleeper announces itself (waiting/sleeping = 1,
// a seq_cst store), looks again at the word the other side changes (`done`,
// the doorbell; a seq_cst load), and only then sleeps on that word with the
// value it read before; the other side changes that word (seq_cst) and then
// reads the announcement (seq_cst), waking only if the sleeper announced
// itself. With all four operations in one total order, at least one side sees
// the other's write (NOTE [Re-checks after the announcement], core/wait.h). So a wake costs a syscall only when
// someone really sleeps; the sleeper alone clears its announcement.
//
// NOTE [Yielding spins]. Before it sleeps, each side polls with
// sched_yield() between polls (about a thousand times, well under a
// millisecond when the core is free). A futex wake-up costs tens of
// microseconds on a VM, several per step if both sides sleep, which is more
// than a cheap Python env's step; spinning with pause instructions instead
// keeps a core busy that a worker needs when there are more processes than
// cores (two workers and the parent on two cores). A yielding poller gives
// its core to any runnable process at once and spins only on a core nobody
// else wants. Measured: benchmarks/python_envs.py --spins.
inline void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, int64_t timeout_us) {
#if defined(__linux__)
  timespec timeout{static_cast<time_t>(timeout_us / 1000000), static_cast<long>((timeout_us % 1000000) * 1000)};
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAIT, expected, &timeout, nullptr, 0);
#else
  (void)word, (void)expected, (void)timeout_us;
#endif
}

inline void futex_wake(std::atomic<uint32_t>& word) {
#if defined(__linux__)
  syscall(SYS_futex, reinterpret_cast<uint32_t*>(&word), FUTEX_WAKE, 1 << 30, nullptr, nullptr, 0);
#else
  (void)word;
#endif
}

// Where everything lives: byte offsets from the region's start. Columns are
// [num_envs, *shape] arrays, one per observation field and then one per
// extra, each 64-byte aligned.
struct RegionLayout {
  size_t num_envs = 0, num_workers = 0, action_size = 0, error_bytes = 0;
  size_t workers = 0, envs = 0, actions = 0, rewards = 0, terminated = 0, truncated = 0, errors = 0, total = 0;
  std::vector<size_t> column_bytes;  // per env
  std::vector<size_t> columns;

  RegionLayout() = default;
  RegionLayout(size_t num_envs_, size_t num_workers_, size_t action_size_, std::vector<size_t> column_bytes_,
               size_t error_bytes_)
      : num_envs(num_envs_),
        num_workers(num_workers_),
        action_size(action_size_),
        error_bytes(error_bytes_),
        column_bytes(std::move(column_bytes_)) {
    size_t cursor = sizeof(RegionHeader);
    auto place = [&cursor](size_t bytes) {
      const size_t at = (cursor + 63) / 64 * 64;
      cursor = at + bytes;
      return at;
    };
    workers = place(num_workers * sizeof(WorkerControl));
    envs = place(num_envs * sizeof(EnvControl));
    actions = place(num_envs * std::max<size_t>(action_size, 1) * sizeof(double));
    rewards = place(num_envs * sizeof(double));
    terminated = place(num_envs);
    truncated = place(num_envs);
    for (const size_t bytes : column_bytes) columns.push_back(place(num_envs * bytes));
    errors = place(num_envs * error_bytes);
    total = (cursor + 4095) / 4096 * 4096;
  }
};

// Typed views of one mapping of the region (each process has its own address).
class Region {
 public:
  Region(uint8_t* base, const RegionLayout& layout) : base_(base), layout_(layout) {}

  RegionHeader& header() const { return *reinterpret_cast<RegionHeader*>(base_); }
  WorkerControl& worker(size_t w) const { return reinterpret_cast<WorkerControl*>(base_ + layout_.workers)[w]; }
  EnvControl& env(size_t i) const { return reinterpret_cast<EnvControl*>(base_ + layout_.envs)[i]; }
  double* action(size_t i) const {
    return reinterpret_cast<double*>(base_ + layout_.actions) + i * std::max<size_t>(layout_.action_size, 1);
  }
  double& reward(size_t i) const { return reinterpret_cast<double*>(base_ + layout_.rewards)[i]; }
  bool terminated(size_t i) const { return base_[layout_.terminated + i] != 0; }
  bool truncated(size_t i) const { return base_[layout_.truncated + i] != 0; }
  void set_flags(size_t i, bool terminated, bool truncated) const {
    base_[layout_.terminated + i] = terminated;
    base_[layout_.truncated + i] = truncated;
  }
  const uint8_t* column(size_t c, size_t i) const { return base_ + layout_.columns[c] + i * layout_.column_bytes[c]; }
  char* error(size_t i) const { return reinterpret_cast<char*>(base_ + layout_.errors + i * layout_.error_bytes); }
  const RegionLayout& layout() const { return layout_; }

 private:
  uint8_t* base_;
  RegionLayout layout_;
};

}  // namespace torchpool::process
