// executor_interrupt_test.cpp — the executor's interrupted and abandoned calls
// (NOTE [Interrupted calls] in csrc/core/executor.h), driven with the probe env
// and an InterruptCheck that throws at chosen polls, as Ctrl-C would.
//
// A sync step interrupted at its first poll discards its queued envs; when
// its wind-down is interrupted too, the call is abandoned: in_flight() no
// longer counts it, must_settle() says so, and settle() finishes it (itself
// interruptible) before any other call. Afterwards every env steps exactly
// once per step again, and no row is stale.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "check.h"
#include "core/executor.h"
#include "envs/testing/probe.h"

using torchpool::Config;
using torchpool::Dtype;
using torchpool::Executor;
using torchpool::ExecutorOptions;
using torchpool::InterruptCheck;
using torchpool::Layout;
using torchpool::testing::Probe;

struct Interrupted : std::runtime_error {
  Interrupted() : std::runtime_error("interrupted") {}
};

// Throws at every poll from the `first`-th on (1-based); 0: never.
struct Polls {
  int64_t first = 0;
  int64_t count = 0;
  InterruptCheck check() {
    return [this] {
      if (first > 0 && ++count >= first) throw Interrupted();
    };
  }
};

// Total steps of each env in a sync block (the probe's observation[3], float32).
static std::vector<float> totals(const Layout& layout, const std::vector<uint8_t>& block, size_t num_envs) {
  const auto* observations = reinterpret_cast<const float*>(block.data() + layout.offset(0));
  std::vector<float> result(num_envs);
  for (size_t env = 0; env < num_envs; ++env) result[env] = observations[env * 4 + 3];
  return result;
}

int main() {
  constexpr size_t kEnvs = 4;
  Config config;
  config.integers = {{"episode_length", 1000}, {"fail_at_step", -1}};
  config.reals = {{"max_sleep_us", 100000},  // steps of up to 100 ms: the waits below poll
                  {"max_busy_us", 0},
                  {"fail_probability", 0}};
  config.flags = {{"dict_observation", false}};
  ExecutorOptions options;
  options.num_envs = kEnvs;
  options.batch_size = kEnvs;
  options.num_blocks = 3;
  options.num_threads = 2;
  Executor<Probe> executor(config, options);
  const Layout& layout = executor.block_layout();
  std::vector<std::vector<uint8_t>> blocks(options.num_blocks, std::vector<uint8_t>(layout.bytes()));
  for (size_t b = 0; b < blocks.size(); ++b) executor.set_block(b, blocks[b].data());
  std::vector<uint8_t> reset_buffer(executor.reset_layout().bytes());
  executor.set_reset_buffer(reset_buffer.data());
  const std::vector<int64_t> actions(kEnvs, 1);

  Polls never;
  executor.reset(nullptr, kEnvs, nullptr, never.check());
  size_t block = executor.step(actions.data(), Dtype::Int64, nullptr, never.check());
  std::vector<float> last = totals(layout, blocks[block], kEnvs);

  // Interrupted at the first poll and again in the wind-down: abandoned.
  Polls every{1};
  bool threw = false;
  try {
    executor.step(actions.data(), Dtype::Int64, nullptr, every.check());
  } catch (const Interrupted&) {
    threw = true;
  }
  CHECK(threw, "the step was not interrupted");
  CHECK(executor.must_settle(), "a step interrupted in its wind-down is not abandoned");
  CHECK(executor.in_flight() == 0, "an abandoned step still counts %llu rows in flight",
        static_cast<unsigned long long>(executor.in_flight()));

  // Settling is interruptible, and an interrupted settle leaves it abandoned.
  threw = false;
  try {
    executor.settle(every.check());
  } catch (const Interrupted&) {
    threw = true;
  }
  CHECK(threw && executor.must_settle(), "an interrupted settle() did not leave the call abandoned");

  // A send settles first (here without interrupts), then queues every env.
  executor.send(actions.data(), Dtype::Int64, nullptr, kEnvs);
  CHECK(!executor.must_settle(), "send() did not settle the abandoned step");
  CHECK(executor.in_flight() == kEnvs, "send() queued %llu rows, not %zu",
        static_cast<unsigned long long>(executor.in_flight()), kEnvs);
  block = executor.recv(never.check());
  std::vector<float> now = totals(layout, blocks[block], kEnvs);
  for (size_t env = 0; env < kEnvs; ++env) {
    // The abandoned step may have stepped an env (its row dropped): one or two steps more, never fewer.
    CHECK(now[env] > last[env] && now[env] <= last[env] + 2, "env %zu: total steps %g -> %g", env, last[env], now[env]);
  }
  last = now;
  block = executor.step(actions.data(), Dtype::Int64, nullptr, never.check());
  now = totals(layout, blocks[block], kEnvs);
  for (size_t env = 0; env < kEnvs; ++env)
    CHECK(now[env] == last[env] + 1, "env %zu: total steps %g -> %g after the pool settled", env, last[env], now[env]);

  // A reset abandoned the same way is settled by the next step.
  threw = false;
  try {
    executor.reset(nullptr, kEnvs, nullptr, every.check());
  } catch (const Interrupted&) {
    threw = true;
  }
  CHECK(threw && executor.must_settle(), "a reset interrupted in its wind-down is not abandoned");
  executor.step(actions.data(), Dtype::Int64, nullptr, never.check());
  CHECK(!executor.must_settle() && executor.in_flight() == 0, "step() did not settle the abandoned reset");
  executor.close();
  return 0;
}
