// driver.cpp — the Atari family outside Python: torchpool_atari_driver ROM [STEPS] [THREADS].
//
// Builds the family's Model from a ROM with the registry's default kwargs and
// sticky actions, an Executor of two envs on THREADS threads (default 2),
// resets them and plays STEPS (default 300) random steps, then prints the
// number of steps, episodes ended and an FNV-1a hash of every observation.
// No Python, no torch, no pybind11: a crash here is ALE's, the toolchain's or
// ours, and a hash that differs from a Python pool's (same seed) is ours. The
// GPU check runs it on the CUDA machine; tests/test_atari_driver.py runs it
// under valgrind and compares its hash across thread counts.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "core/executor.h"
#include "envs/atari/atari.h"

using namespace torchpool;

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s ROM [STEPS] [THREADS]\n", argv[0]);
    return 2;
  }
  const int steps = argc > 2 ? std::atoi(argv[2]) : 300;
  const size_t threads = argc > 3 ? static_cast<size_t>(std::atoi(argv[3])) : 2;
  try {
    Config config;  // torchpool/registry.py's defaults for the Atari ids, sticky actions on
    config.strings = {{"rom_path", argv[1]}, {"resize", "area"}, {"preprocessing", "gymnasium"}};
    config.integers = {{"img_height", 84}, {"img_width", 84}, {"stack_num", 4},  {"frame_skip", 4},
                       {"noop_max", 30},   {"mode", -1},      {"difficulty", -1}};
    config.flags = {{"gray_scale", true},
                    {"use_fire_reset", true},
                    {"episodic_life", false},
                    {"reward_clip", false},
                    {"full_action_space", false}};
    config.reals = {{"repeat_action_probability", 0.25}};
    ExecutorOptions options;
    options.num_envs = options.batch_size = 2;
    options.num_blocks = 3;
    options.num_threads = threads;
    options.seed = 7;
    Executor<atari::Atari> executor(config, options);
    const Layout& layout = executor.block_layout();
    std::vector<std::vector<uint8_t>> blocks(options.num_blocks, std::vector<uint8_t>(layout.bytes()));
    for (size_t b = 0; b < blocks.size(); ++b) executor.set_block(b, blocks[b].data());
    std::vector<uint8_t> reset_buffer(executor.reset_layout().bytes());
    executor.set_reset_buffer(reset_buffer.data());

    uint64_t hash = 14695981039346656037ULL;
    auto mix = [&hash](const uint8_t* bytes, size_t count) {
      for (size_t i = 0; i < count; ++i) hash = (hash ^ bytes[i]) * 1099511628211ULL;
    };
    size_t done_column = 0;
    while (layout.fields()[done_column].name != "done") ++done_column;
    const size_t observation_bytes = executor.spec().observations[0].row_bytes() * options.num_envs;
    executor.reset(nullptr, options.num_envs, nullptr, nullptr);
    mix(reset_buffer.data() + executor.reset_layout().offset(0), observation_bytes);
    Rng actions_rng(1);
    const int64_t num_actions = executor.spec().action.num_actions;
    int64_t episodes = 0;
    for (int step = 0; step < steps; ++step) {
      const std::vector<int64_t> actions = {actions_rng.integer(num_actions), actions_rng.integer(num_actions)};
      const size_t block = executor.step(actions.data(), Dtype::Int64, nullptr, nullptr);
      mix(blocks[block].data() + layout.offset(0), observation_bytes);
      const auto* done = blocks[block].data() + layout.offset(done_column);
      for (size_t env = 0; env < options.num_envs; ++env) episodes += done[env] != 0;
    }
    executor.close();
    std::printf("steps %d episodes %lld hash %016llx\n", steps, static_cast<long long>(episodes),
                static_cast<unsigned long long>(hash));
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "torchpool_atari_driver: %s\n", error.what());
    return 1;
  }
}
