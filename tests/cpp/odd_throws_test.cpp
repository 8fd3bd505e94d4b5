// odd_throws_test.cpp — what a throw of any type must not do: a substep of the
// split tail (NOTE [Split tail]) whose advance() throws something that is no
// std::exception (a user's header may throw anything) fails that env's row,
// as a throwing step() does, instead of escaping a worker thread and
// terminating the process; and the envs' build stops when the caller's
// Ctrl-C poll throws (run_on_threads' check), the jobs not begun skipped.
//
//   c++ -O2 -std=c++20 -pthread -I csrc tests/cpp/odd_throws_test.cpp -o t && ./t
#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "check.h"
#include "core/executor.h"

using namespace torchpool;

// Four substeps per step; the 5th advance() over all envs throws an int.
std::atomic<int> advances{0};

struct OddModel {
  explicit OddModel(const Config&) {}
  EnvSpec spec(Dtype obs_dtype) const {
    EnvSpec spec;
    spec.observations = {{{1}, obs_dtype, {}, {}}};
    spec.action.discrete = true;
    spec.action.num_actions = 2;
    spec.max_episode_steps = 0;
    spec.step_cost_ns = 2e6;  // costly: a sync pool lets the caller work and splits its tail
    return spec;
  }
};

class OddThrower {
 public:
  using Model = OddModel;
  explicit OddThrower(const Model&) {}
  void reset(Rng&, StepOutput& out) { out.set_observation(0, {0.0}); }
  int substeps() const { return 4; }
  void advance(const Action&) {
    if (advances.fetch_add(1) + 1 == 5) throw 42;
  }
  StepResult step(const Action&, Rng&, StepOutput& out) {
    out.set_observation(0, {1.0});
    return {};
  }
};

void an_odd_throw_in_a_split_substep_fails_its_row() {
  constexpr size_t kEnvs = 8;
  ExecutorOptions options;
  options.num_envs = kEnvs;
  options.batch_size = kEnvs;
  options.num_threads = 2;
  Executor<OddThrower> executor(Config{}, options);
  CHECK(executor.schedule().split_substeps >= 2, "the split tail is off (split_substeps %d): nothing is tested",
        static_cast<int>(executor.schedule().split_substeps));
  const Layout& layout = executor.block_layout();
  std::vector<std::vector<uint8_t>> blocks(options.num_blocks, std::vector<uint8_t>(layout.bytes()));
  for (size_t b = 0; b < blocks.size(); ++b) executor.set_block(b, blocks[b].data());
  std::vector<uint8_t> reset_buffer(executor.reset_layout().bytes());
  executor.set_reset_buffer(reset_buffer.data());
  executor.reset(nullptr, kEnvs, nullptr, nullptr);
  const std::vector<int64_t> actions(kEnvs, 1);
  bool failed = false;
  for (int step = 0; step < 4 && !failed; ++step) {
    try {
      executor.step(actions.data(), Dtype::Int64, nullptr, nullptr);
    } catch (const EnvFailure& failure) {
      failed = true;
      CHECK(failure.env_ids.size() == 1, "%zu envs failed, not the one", failure.env_ids.size());
      CHECK(failure.messages[0].find("unknown C++ exception") != std::string::npos, "the failure says '%s'",
            failure.messages[0].c_str());
    }
  }
  CHECK(failed, "no step failed: the throwing advance() never ran in the split tail (%d advances)", advances.load());
}

void a_throwing_check_stops_the_build() {
  std::atomic<int> built{0};
  int polls = 0;
  bool stopped = false;
  try {
    run_on_threads(
        2, 200,
        [&](size_t) {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          built.fetch_add(1);
        },
        [&] {
          if (++polls == 2) throw std::runtime_error("Ctrl-C");
        });
  } catch (const std::runtime_error& error) {
    stopped = std::string(error.what()) == "Ctrl-C";
  }
  CHECK(stopped, "the check's exception did not come back from run_on_threads");
  CHECK(built.load() < 200, "every job ran (%d): the build did not stop", built.load());

  polls = 0, built = 0, stopped = false;
  try {  // one thread: the caller polls between jobs
    run_on_threads(
        1, 50, [&](size_t) { built.fetch_add(1); },
        [&] {
          if (++polls == 10) throw std::runtime_error("Ctrl-C");
        });
  } catch (const std::runtime_error&) {
    stopped = true;
  }
  CHECK(stopped && built.load() == 9, "one thread: %d jobs ran before the 10th poll stopped it", built.load());
}

int main() {
  an_odd_throw_in_a_split_substep_fails_its_row();
  a_throwing_check_stops_the_build();
  std::printf("ok\n");
  return 0;
}
