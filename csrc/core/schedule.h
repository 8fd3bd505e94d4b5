// schedule.h — who steps which env, and how threads wait: one plan per pool.
//
// plan_schedule() is a pure function of the env's declared step cost, the
// pool's sizes and the family's ability to split a step. The Executor runs
// the Schedule it returns and never decides anything else about threads;
// Python shows it as `pool.schedule`. Every tuned constant lives here with
// its reason; docs/design.md ("Scheduling") tabulates the modes and
// docs/performance.md holds the measurements behind the numbers.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

namespace torchpool {

namespace schedule {
// A work item of cheap envs holds about this much work, so they run as a tight loop.
inline constexpr double kItemTargetNs = 20e3;
// About what waking a sleeping thread costs on a VM: cheaper items are left to spinners or the caller.
inline constexpr double kWakeWorthNs = 30e3;
// Above this an env is costly: one per item, every push wakes the workers, and
// the caller steps envs only in a mode where it replaces a worker.
inline constexpr double kCostlyStepNs = 5e3;
// Longer steps stay off the caller: Ctrl-C waits for a step the caller is in.
inline constexpr double kCallerLongestStepNs = 10e6;
// An async batch this short (its steps over the threads) makes the caller a
// worker: it would otherwise spend its wait falling asleep and being woken.
inline constexpr double kShortBatchNs = 150e3;
// The caller, out of items, spins for the others' last steps this many step
// costs before it sleeps; capped, so a stuck env still lets it sleep.
inline constexpr double kCallerLastItemsSpinSteps = 2.0;
inline constexpr double kLongestSpinNs = 5e6;
// How often a sleeping caller wakes to poll for Ctrl-C.
inline constexpr int64_t kCallerSleepSliceUs = 20000;
// Envs held back per thread for the split tail: enough to even out a step's end.
inline constexpr size_t kTailEnvsPerThread = 2;
}  // namespace schedule

enum class ScheduleMode : int32_t {
  kCallerRunsItems = 0,  // cheap envs: chunked items the caller runs while it waits
  kCallerOnly = 1,       // costly, sync, one thread: no worker, the caller steps every env
  kCallerAsWorker = 2,   // costly, sync or a short async batch: the caller takes one worker's place
  kWorkers = 3,          // costly, a long async batch or a long step: workers step, the caller sleeps
};

inline const char* mode_name(ScheduleMode mode) {
  switch (mode) {
    case ScheduleMode::kCallerRunsItems:
      return "caller_runs_items";
    case ScheduleMode::kCallerOnly:
      return "caller_only";
    case ScheduleMode::kCallerAsWorker:
      return "caller_as_worker";
    case ScheduleMode::kWorkers:
      return "workers";
  }
  return "unknown";
}

// Switches for modes of small gain, so a benchmark can A/B them in one
// process (benchmarks/schedule_ab.py).
enum ScheduleOff : uint32_t {
  kOffSplitTail = 1,  // NOTE [Split tail]
};

struct ScheduleInput {
  double step_cost_ns = 0.0;  // EnvSpec::step_cost_ns
  size_t num_envs = 1;
  size_t batch_size = 1;
  size_t num_threads = 1;
  int32_t substeps = 0;  // > 1: the family can run a step as that many substeps (NOTE [Split tail])
  int32_t spin_polls = 0;
  uint32_t off = 0;  // ScheduleOff bits
};

struct Schedule {
  ScheduleMode mode = ScheduleMode::kCallerRunsItems;
  double step_cost_ns = 0.0;
  size_t num_envs = 1;
  size_t num_threads = 1;
  size_t worker_threads = 1;      // OS threads started
  size_t envs_per_target = 1;     // cheap envs per kItemTargetNs of work
  bool caller_runs_items = true;  // the caller claims queued items while it waits
  int32_t caller_spin_polls = 0;  // polls before the caller sleeps
  // Caller as a worker only; 0 means none.
  double caller_last_items_spin_ns = 0.0;  // NOTE [The caller waits out the last items]
  int32_t split_substeps = 0;              // > 1: sync steps hold back a split tail (NOTE [Split tail])
  size_t build_threads = 1;                // threads that construct the envs

  bool costly() const { return step_cost_ns > schedule::kCostlyStepNs; }
  bool caller_is_worker() const { return mode == ScheduleMode::kCallerAsWorker || mode == ScheduleMode::kCallerOnly; }

  // Envs per work item for a push of `count`: costly envs one each, for load
  // balance; cheap ones at least kItemTargetNs of work per item, and no fewer
  // items than threads when each would still be that big.
  size_t envs_per_item(size_t count) const {
    if (costly()) return 1;
    const size_t even_split = (count + num_threads - 1) / num_threads;
    return std::max<size_t>(1, std::min(std::max(envs_per_target, even_split), count));
  }

  // Whether a push of `count` envs wakes sleeping workers.
  bool wakes_workers(size_t count) const {
    return costly() || static_cast<double>(envs_per_item(count)) * step_cost_ns >= schedule::kWakeWorthNs;
  }

  // How many of a sync step's `count` envs go to the split tail: two per
  // thread, leaving at least one queued env per thread so the push still
  // wakes the workers.
  size_t split_tail_size(size_t count) const {
    if (split_substeps < 2 || count < schedule::kTailEnvsPerThread * num_threads) return 0;
    return std::min(schedule::kTailEnvsPerThread * num_threads, count - num_threads);
  }
};

inline Schedule plan_schedule(const ScheduleInput& in) {
  Schedule plan;
  plan.step_cost_ns = in.step_cost_ns;
  plan.num_envs = in.num_envs;
  plan.num_threads = std::max<size_t>(in.num_threads, 1);
  plan.envs_per_target = static_cast<size_t>(schedule::kItemTargetNs / std::max(in.step_cost_ns, 1.0));
  const size_t threads = plan.num_threads;
  const bool sync = in.batch_size == in.num_envs;
  const double batch_ns = static_cast<double>(in.batch_size) * in.step_cost_ns / static_cast<double>(threads);
  // NOTE [The caller as a worker]. In a sync pool of costly envs the calling
  // thread would only sleep through each step(): it takes one worker's place
  // instead, so num_threads threads still step envs and none waits for a
  // wake-up; with one thread there is no worker at all. Async pools keep every
  // worker, so the envs step while the caller runs its policy, unless a batch
  // is so short that the caller would spend its wait falling asleep.
  if (!plan.costly()) {
    plan.mode = ScheduleMode::kCallerRunsItems;
  } else if (in.step_cost_ns <= schedule::kCallerLongestStepNs &&
             (sync || (threads >= 2 && batch_ns <= schedule::kShortBatchNs))) {
    plan.mode = sync && threads == 1 ? ScheduleMode::kCallerOnly : ScheduleMode::kCallerAsWorker;
  } else {
    plan.mode = ScheduleMode::kWorkers;
  }
  plan.worker_threads = threads - (plan.caller_is_worker() ? 1 : 0);
  plan.caller_runs_items = plan.mode != ScheduleMode::kWorkers;
  // A caller that only waits sleeps at once: spinning, it would be one more
  // runnable thread on the cores the workers need.
  plan.caller_spin_polls = plan.caller_runs_items ? in.spin_polls : 0;
  // NOTE [The caller waits out the last items]. Where the caller is a worker
  // beside others, the queue is empty once it runs out of items: what remains
  // is at most one env step on each other worker, all on cores of their own.
  // Sleeping then would add a wake-up (tens of µs on a VM) to every step();
  // spinning through about one env step costs nothing, since no other work
  // could use this core. Bounded, so a stuck env still lets the caller sleep
  // (Ctrl-C). With caller_only nobody else runs items.
  if (plan.mode == ScheduleMode::kCallerAsWorker) {
    plan.caller_last_items_spin_ns =
        std::min(schedule::kCallerLastItemsSpinSteps * in.step_cost_ns, schedule::kLongestSpinNs);
    if (sync && threads >= 2 && in.substeps >= 2 && !(in.off & kOffSplitTail)) plan.split_substeps = in.substeps;
  }
  // Costly envs can be costly to build (an ALE instance precomputes tables).
  plan.build_threads = plan.costly() ? std::max<size_t>(1, std::min(threads, in.num_envs)) : 1;
  return plan;
}

}  // namespace torchpool
