// plugin.h — how a family module hands its executors to the core module.
//
// Every env family is its own Python extension module (torchpool._classic,
// _mujoco, _atari, _testing; later a user's compiled header), built against
// these headers. It exposes one FamilyPlugin through a capsule named
// kPluginCapsule; torchpool._core (bindings.cpp) checks the plugin's AbiStamp
// against its own and then makes pools through make(). Python imports a
// family module only when an id of that family is first made, so `import
// torchpool` loads no libmujoco and no ALE.
//
// Both sides pass C++ objects (Config, ExecutorOptions, std::unique_ptr,
// exceptions) across the module boundary, which is sound only when both were
// compiled from the same headers by the same compiler and standard library:
// the stamp records what must match, and a plugin that differs is refused
// with both stamps in the message, never loaded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "executor.h"

namespace torchpool {

inline constexpr const char* kPluginCapsule = "torchpool.family_plugin";

// Bumped whenever the interface between _core and a family module changes
// (ExecutorBase, ExecutorOptions, Config, EnvSpec, the exceptions).
inline constexpr uint32_t kPluginAbiVersion = 2;  // 2: ExecutorBase::has_state/renders/render

struct AbiStamp {
  uint32_t version = kPluginAbiVersion;
  uint32_t options_size = sizeof(ExecutorOptions);
  uint32_t config_size = sizeof(Config);
  uint32_t spec_size = sizeof(EnvSpec);
#ifdef _GLIBCXX_USE_CXX11_ABI
  int32_t cxx11_abi = _GLIBCXX_USE_CXX11_ABI;  // libstdc++'s std::string layout
#else
  int32_t cxx11_abi = -1;
#endif
  const char* compiler = __VERSION__;

  bool operator==(const AbiStamp& other) const {
    return version == other.version && options_size == other.options_size && config_size == other.config_size &&
           spec_size == other.spec_size && cxx11_abi == other.cxx11_abi && std::string(compiler) == other.compiler;
  }
  std::string describe() const {
    return "plugin ABI " + std::to_string(version) + ", " + compiler + ", sizes " + std::to_string(options_size) + "/" +
           std::to_string(config_size) + "/" + std::to_string(spec_size);
  }
};

using ExecutorFactory = std::unique_ptr<ExecutorBase> (*)(const Config&, const ExecutorOptions&);

// One family of a module: its name (the registry's EnvEntry.family), factory
// and the task kwargs its Model declares (empty for the built-in families).
struct FamilyEntry {
  const char* name;
  ExecutorFactory make;
  std::vector<TaskKwarg> kwargs;
};

struct FamilyPlugin {
  AbiStamp abi;
  std::vector<FamilyEntry> families;

  // The factory of `name`, or nullptr.
  ExecutorFactory find(const std::string& name) const {
    for (const FamilyEntry& entry : families)
      if (name == entry.name) return entry.make;
    return nullptr;
  }
};

template <class Env>
std::unique_ptr<ExecutorBase> make_executor(const Config& config, const ExecutorOptions& options) {
  return std::make_unique<Executor<Env>>(config, options);
}

// One line per env of a family module: family<CartPole>("CartPole").
template <class Env>
FamilyEntry family(const char* name) {
  static_assert(EnvConcept<Env>, "this type does not satisfy torchpool::EnvConcept (csrc/core/env.h)");
  std::vector<TaskKwarg> kwargs;
  if constexpr (requires { Env::Model::kwargs(); }) kwargs = Env::Model::kwargs();
  return {name, &make_executor<Env>, std::move(kwargs)};
}

}  // namespace torchpool
