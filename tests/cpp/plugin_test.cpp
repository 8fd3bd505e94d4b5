// plugin_test.cpp — the family plugin interface (csrc/core/plugin.h): a plugin
// finds its families by name, and a stamp that differs in anything that must
// match is unequal (the core then refuses the module).
#include "core/plugin.h"

#include <string>

#include "check.h"
#include "envs/testing/probe.h"

using namespace torchpool;

int main() {
  const FamilyPlugin plugin{AbiStamp{}, {family<testing::Probe>("Probe")}};
  CHECK(plugin.find("Probe") != nullptr && plugin.find("CartPole") == nullptr, "find() by family name");
  const AbiStamp ours;
  CHECK(plugin.abi == ours, "a plugin built with these headers has this core's stamp");
  AbiStamp other = ours;
  other.version += 1;
  CHECK(!(other == ours), "another ABI version is refused");
  other = ours;
  other.options_size += 8;
  CHECK(!(other == ours), "another ExecutorOptions layout is refused");
  other = ours;
  other.compiler = "another compiler";
  CHECK(!(other == ours), "another compiler is refused");
  CHECK(ours.describe().find(__VERSION__) != std::string::npos, "the description names the compiler");

  Config config;
  config.numbers = {
      {"episode_length", 5}, {"max_sleep_us", 0}, {"max_busy_us", 0}, {"fail_at_step", -1}, {"fail_probability", 0}};
  ExecutorOptions options;
  options.num_envs = 2;
  options.batch_size = 2;
  const std::unique_ptr<ExecutorBase> executor = plugin.find("Probe")(config, options);
  CHECK(executor->spec().observations.size() == 1, "the factory makes the family's executor");
  executor->close();
  return 0;
}
