// schedule_test.cpp — plan_schedule() (csrc/core/schedule.h): the mode each
// kind of pool gets, the threads it starts, item sizes, wake rules and the
// bounds of every spin, for the worked examples of docs/design.md.
//
//   c++ -O2 -std=c++20 -I csrc tests/cpp/schedule_test.cpp -o t && ./t
#include <cstdio>

#include "core/schedule.h"

#include "check.h"

using namespace torchpool;

namespace {

constexpr double kCartPoleNs = 300, kHalfCheetahNs = 16e3, kPongNs = 430e3;

Schedule plan(double cost_ns, size_t envs, size_t batch, size_t threads, int32_t substeps = 0, uint32_t off = 0) {
  return plan_schedule(ScheduleInput{cost_ns, envs, batch, threads, substeps, /*spin_polls=*/2000, off});
}

void cheap_envs_run_in_chunks_on_the_caller() {
  for (size_t envs : {8, 256}) {
    const Schedule p = plan(kCartPoleNs, envs, envs, 2);
    CHECK(p.mode == ScheduleMode::kCallerRunsItems, "CartPole x%zu: mode %s", envs, mode_name(p.mode));
    CHECK(p.worker_threads == 2, "CartPole x%zu: %zu workers", envs, p.worker_threads);
    CHECK(p.caller_runs_items && p.caller_spin_polls == 2000, "CartPole: the caller runs items after spinning");
    // 20 us / 0.3 us = 66 envs per item; fewer envs make one item, and 256 make 2 (one per thread).
    CHECK(p.envs_per_item(envs) == (envs == 8 ? 8 : 128), "CartPole x%zu: %zu envs per item", envs,
          p.envs_per_item(envs));
    CHECK(p.wakes_workers(envs) == (envs == 256), "CartPole x%zu: wakes=%d", envs, p.wakes_workers(envs));
    CHECK(p.caller_last_items_spin_ns == 0 && p.split_substeps == 0 && p.build_threads == 1,
          "CartPole: none of the caller-as-worker machinery");
  }
}

void a_sync_pool_of_one_thread_has_no_worker() {
  const Schedule p = plan(kPongNs, 4, 4, 1);
  CHECK(p.mode == ScheduleMode::kCallerOnly, "Pong 4 / 4, 1 thread: mode %s", mode_name(p.mode));
  CHECK(p.worker_threads == 0, "Pong, 1 thread: %zu workers", p.worker_threads);
  CHECK(p.caller_runs_items && p.caller_last_items_spin_ns == 0, "nobody else runs items: no spin for them");
}

void sync_pools_of_costly_envs_make_the_caller_a_worker() {
  const Schedule pong = plan(kPongNs, 8, 8, 2);
  CHECK(pong.mode == ScheduleMode::kCallerAsWorker, "Pong 8 / 8: mode %s", mode_name(pong.mode));
  CHECK(pong.worker_threads == 1 && pong.envs_per_item(8) == 1 && pong.wakes_workers(1), "Pong 8 / 8: 1 worker");
  CHECK(pong.caller_last_items_spin_ns == 860e3, "Pong: the caller spins 2 steps, got %g ns",
        pong.caller_last_items_spin_ns);
  CHECK(pong.split_substeps == 0 && pong.split_tail_size(8) == 0, "ALE cannot split a step");
  CHECK(pong.build_threads == 2, "costly envs are built on 2 threads");

  const Schedule cheetah = plan(kHalfCheetahNs, 8, 8, 2, /*substeps=*/5);
  CHECK(cheetah.mode == ScheduleMode::kCallerAsWorker && cheetah.split_substeps == 5, "HalfCheetah 8 / 8");
  CHECK(cheetah.split_tail_size(8) == 4, "2 envs per thread in the tail, got %zu", cheetah.split_tail_size(8));
  CHECK(cheetah.split_tail_size(3) == 0, "fewer envs than 2 per thread: no tail");
  const Schedule slow = plan(3e6, 8, 8, 2, 5);  // 3 ms steps: 6 and 12 ms, capped
  CHECK(slow.caller_last_items_spin_ns == 5e6, "the spin is capped at 5 ms");
}

void async_pools_keep_every_worker_unless_the_batch_is_short() {
  const Schedule pong = plan(kPongNs, 16, 8, 2);  // 8 x 430 / 2 us, well over 150 us
  CHECK(pong.mode == ScheduleMode::kWorkers && pong.worker_threads == 2, "Pong 16 / 8: mode %s", mode_name(pong.mode));
  CHECK(!pong.caller_runs_items && pong.caller_spin_polls == 0, "a caller that only waits sleeps at once");
  const Schedule cheetah = plan(kHalfCheetahNs, 8, 4, 2, 5);  // 4 x 16 / 2 = 32 us
  CHECK(cheetah.mode == ScheduleMode::kCallerAsWorker, "HalfCheetah 8 / 4: mode %s", mode_name(cheetah.mode));
  CHECK(cheetah.split_substeps == 0, "async: no split tail");
  const Schedule one = plan(kHalfCheetahNs, 8, 4, 1);
  CHECK(one.mode == ScheduleMode::kWorkers && one.worker_threads == 1, "async, 1 thread: the worker stays");
}

void steps_too_long_for_ctrl_c_stay_off_the_caller() {
  const Schedule p = plan(20e6, 4, 4, 2);
  CHECK(p.mode == ScheduleMode::kWorkers && p.worker_threads == 2, "20 ms steps: mode %s", mode_name(p.mode));
}

void a_switched_off_split_tail_leaves_the_rest() {
  const Schedule on = plan(kHalfCheetahNs, 8, 8, 2, 5), off = plan(kHalfCheetahNs, 8, 8, 2, 5, kOffSplitTail);
  CHECK(off.mode == on.mode && off.caller_last_items_spin_ns == on.caller_last_items_spin_ns && off.split_substeps == 0,
        "split tail off, the rest as planned");
}

}  // namespace

int main() {
  cheap_envs_run_in_chunks_on_the_caller();
  a_sync_pool_of_one_thread_has_no_worker();
  sync_pools_of_costly_envs_make_the_caller_a_worker();
  async_pools_keep_every_worker_unless_the_batch_is_short();
  steps_too_long_for_ctrl_c_stay_off_the_caller();
  a_switched_off_split_tail_leaves_the_rest();
  std::puts("schedule_test: ok");
  return 0;
}
