// plugin_test.cpp — the C plug-in interface (csrc/core/plugin_abi.h, plugin.h):
// a module's table names its version and families, makes executors through C
// calls only, and reports every failure as a status and a message, never as
// an exception crossing the boundary.
#include "core/plugin.h"

#include <string>

#include "check.h"
#include "envs/testing/probe.h"

using namespace torchpool;

namespace {

TorchpoolKwarg integer(const char* name, int64_t value) {
  TorchpoolKwarg kwarg{};
  kwarg.name = name, kwarg.type = TORCHPOOL_KWARG_INT, kwarg.integer = value;
  return kwarg;
}
TorchpoolKwarg real(const char* name, double value) {
  TorchpoolKwarg kwarg{};
  kwarg.name = name, kwarg.type = TORCHPOOL_KWARG_FLOAT, kwarg.real = value;
  return kwarg;
}
TorchpoolKwarg flag(const char* name, bool value) {
  TorchpoolKwarg kwarg{};
  kwarg.name = name, kwarg.type = TORCHPOOL_KWARG_BOOL, kwarg.integer = value;
  return kwarg;
}

}  // namespace

int main() {
  const TorchpoolPlugin* table = plugin_table({family<testing::Probe>("Probe")});
  CHECK(table->abi_version == TORCHPOOL_PLUGIN_ABI_VERSION, "the table names the ABI version it speaks");
  CHECK(table->struct_size == sizeof(TorchpoolPlugin), "and its own size");
  CHECK(table->family_count == 1 && std::string(table->families[0].name) == "Probe", "its families by name");

  const TorchpoolKwarg kwargs[] = {integer("episode_length", 5), real("max_sleep_us", 0),
                                   real("max_busy_us", 0),       integer("fail_at_step", 2),
                                   real("fail_probability", 0),  flag("dict_observation", false)};
  TorchpoolOptions options{};
  options.num_envs = 2, options.batch_size = 2, options.num_blocks = 3, options.num_threads = 1;
  options.obs_dtype = static_cast<int32_t>(Dtype::Float32), options.max_episode_steps = -1, options.spin_polls = 10;

  CHECK(table->make(table, "CartPole", kwargs, 6, &options, nullptr, nullptr) == nullptr,
        "an unknown family makes nothing");
  CHECK(table->last_error()->status == TORCHPOOL_INPUT_ERROR &&
            std::string(table->last_error()->message).find("unknown env family 'CartPole'") != std::string::npos,
        "and says so as a status and a message");

  TorchpoolKwarg mistyped[6];
  for (int i = 0; i < 6; ++i) mistyped[i] = kwargs[i];
  mistyped[0] = real("episode_length", 5.0);
  CHECK(table->make(table, "Probe", mistyped, 6, &options, nullptr, nullptr) == nullptr,
        "a float where the family reads an int fails");
  CHECK(table->last_error()->status == TORCHPOOL_VALUE_ERROR &&
            std::string(table->last_error()->message) ==
                "task kwarg 'episode_length' is a float, but the family reads it as an int",
        "a mistyped kwarg is named: %s", table->last_error()->message);

  TorchpoolExecutor* executor = table->make(table, "Probe", kwargs, 6, &options, nullptr, nullptr);
  CHECK(executor != nullptr, "the table makes the family's executor");
  CHECK(table->spec(executor)->observation_count == 1, "whose spec reads through C views");
  std::vector<uint8_t> block(table->block_layout(executor)->bytes), reset(table->reset_layout(executor)->bytes);
  for (uint64_t b = 0; b < 3; ++b) CHECK(table->set_block(executor, b, block.data()) == TORCHPOOL_OK, "set_block");
  CHECK(table->set_reset_buffer(executor, reset.data()) == TORCHPOOL_OK, "set_reset_buffer");
  CHECK(table->reset(executor, nullptr, 2, nullptr, nullptr, nullptr) == TORCHPOOL_OK, "reset");
  const float actions[2] = {0, 0};
  uint64_t filled = 0;
  CHECK(table->step(executor, actions, static_cast<int32_t>(Dtype::Float32), nullptr, nullptr, nullptr, &filled) ==
            TORCHPOOL_OK,
        "a first step");
  const int32_t status =
      table->step(executor, actions, static_cast<int32_t>(Dtype::Float32), nullptr, nullptr, nullptr, &filled);
  const TorchpoolError& failure = *table->last_error();
  CHECK(status == TORCHPOOL_ENV_FAILURE && failure.failure_count == 2 && failure.env_ids[0] == 0 &&
            failure.env_ids[1] == 1 && std::string(failure.failure_messages[0]).find("step 2") != std::string::npos,
        "an env's exception reaches the caller as a failure with its envs and messages");

  const int32_t interrupted = table->settle(executor, [](void*) -> int32_t { return 1; }, nullptr);
  CHECK(interrupted == TORCHPOOL_OK, "settle with nothing abandoned never polls");
  CHECK(table->send(executor, actions, static_cast<int32_t>(Dtype::Float32), nullptr, 2) == TORCHPOOL_OK, "send");
  CHECK(table->recv(
            executor, [](void*) -> int32_t { return 1; }, nullptr, &filled) == TORCHPOOL_OK ||
            table->last_error()->status == TORCHPOOL_INTERRUPTED,
        "a check that answers stop ends a wait as INTERRUPTED, not as an exception");
  TorchpoolCounters counts{};
  CHECK(table->counters(executor, &counts) == TORCHPOOL_OK && counts.rows_sent >= counts.rows_received,
        "the ledger's counters come back with a status (version 5)");
  int32_t wakes = -1, must = -1;
  CHECK(table->wakes_workers(executor, 2, &wakes) == TORCHPOOL_OK && (wakes == 0 || wakes == 1), "wakes_workers");
  CHECK(table->must_settle(executor, &must) == TORCHPOOL_OK && (must == 0 || must == 1), "must_settle");
  table->destroy(executor);

  const TorchpoolExecutor* stopped =
      table->make(table, "Probe", kwargs, 6, &options, [](void*) -> int32_t { return 1; }, nullptr);
  CHECK(stopped == nullptr && table->last_error()->status == TORCHPOOL_INTERRUPTED,
        "a check that answers stop while the envs are built makes nothing, as INTERRUPTED (version 5)");
  return 0;
}
