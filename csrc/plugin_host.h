// plugin_host.h — the core module's side of the C plug-in interface
// (core/plugin_abi.h): an executor made by a family module, driven through
// its TorchpoolPlugin table, with each failed call turned back into an
// exception of this module. Only bindings.cpp uses it.
#pragma once

#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/errors.h"
#include "core/plugin_abi.h"

namespace torchpool {

// Raised when a call was interrupted by its check: the caller raises what the check saw.
struct CheckStopped {};

class PluginExecutor {
 public:
  // Refuses a table of another ABI version, naming both.
  static const TorchpoolPlugin& checked(const TorchpoolPlugin* plugin, const std::string& family) {
    if (plugin->abi_version != TORCHPOOL_PLUGIN_ABI_VERSION || plugin->struct_size < sizeof(TorchpoolPlugin))
      throw InputError(
          "the module of family '" + family + "' speaks torchpool plug-in ABI " + std::to_string(plugin->abi_version) +
          " (built with " +
          (plugin->abi_version == TORCHPOOL_PLUGIN_ABI_VERSION ? plugin->built_with : "an older torchpool") +
          "); this core speaks ABI " + std::to_string(TORCHPOOL_PLUGIN_ABI_VERSION) + ": rebuild it");
    return *plugin;
  }

  // Builds the envs; `check` (the caller's Ctrl-C poll, may be null) can stop that (CheckStopped).
  PluginExecutor(const TorchpoolPlugin& plugin, const std::string& family, const std::vector<TorchpoolKwarg>& kwargs,
                 const TorchpoolOptions& options, TorchpoolCheck check = nullptr, void* check_context = nullptr)
      : plugin_(plugin),
        handle_(plugin.make(&plugin, family.c_str(), kwargs.data(), kwargs.size(), &options, check, check_context)),
        num_blocks_(options.num_blocks) {
    if (handle_ == nullptr) raise(plugin_.last_error()->status);
  }
  ~PluginExecutor() { plugin_.destroy(handle_); }
  PluginExecutor(const PluginExecutor&) = delete;
  PluginExecutor& operator=(const PluginExecutor&) = delete;

  const TorchpoolPlugin& plugin() const { return plugin_; }
  size_t num_blocks() const { return num_blocks_; }
  const TorchpoolSpec& spec() const { return *plugin_.spec(handle_); }
  const TorchpoolLayout& block_layout() const { return *plugin_.block_layout(handle_); }
  const TorchpoolLayout& reset_layout() const { return *plugin_.reset_layout(handle_); }
  TorchpoolSchedule schedule() const {
    TorchpoolSchedule plan{};
    ok(plugin_.schedule(handle_, &plan));
    return plan;
  }
  TorchpoolCounters counters() const {
    TorchpoolCounters counts{};
    ok(plugin_.counters(handle_, &counts));
    return counts;
  }
  bool wakes_workers(uint64_t count) const {
    int32_t wakes = 0;
    ok(plugin_.wakes_workers(handle_, count, &wakes));
    return wakes != 0;
  }
  bool must_settle() const {
    int32_t must = 0;
    ok(plugin_.must_settle(handle_, &must));
    return must != 0;
  }

  void set_block(uint64_t block, uint8_t* base) { ok(plugin_.set_block(handle_, block, base)); }
  void set_block_targets(uint64_t block, const int64_t* table) { ok(plugin_.set_block_targets(handle_, block, table)); }
  void set_reset_buffer(uint8_t* base) { ok(plugin_.set_reset_buffer(handle_, base)); }
  void send(const void* actions, int32_t dtype, const int64_t* ids, uint64_t count) {
    ok(plugin_.send(handle_, actions, dtype, ids, count));
  }
  void async_reset(const int64_t* ids, uint64_t count) { ok(plugin_.async_reset(handle_, ids, count)); }
  // The blocking calls return a status (they run without the GIL); raise() it once the GIL is back.
  int32_t step(const void* actions, int32_t dtype, void* record, TorchpoolCheck check, void* context, uint64_t* block) {
    return plugin_.step(handle_, actions, dtype, record, check, context, block);
  }
  int32_t recv(TorchpoolCheck check, void* context, uint64_t* block) {
    return plugin_.recv(handle_, check, context, block);
  }
  int32_t reset(const int64_t* ids, uint64_t count, const uint64_t* seeds, TorchpoolCheck check, void* context) {
    return plugin_.reset(handle_, ids, count, seeds, check, context);
  }
  int32_t step_some(const void* actions, int32_t dtype, const int64_t* ids, uint64_t count, TorchpoolCheck check,
                    void* context) {
    return plugin_.step_some(handle_, actions, dtype, ids, count, check, context);
  }
  int32_t settle(TorchpoolCheck check, void* context) { return plugin_.settle(handle_, check, context); }
  bool undo_recv() {
    int32_t undone = 0;
    ok(plugin_.undo_recv(handle_, &undone));
    return undone != 0;
  }
  void forget_threads() { ok(plugin_.forget_threads(handle_)); }
  int32_t close() { return plugin_.close(handle_); }

  std::vector<double> get_state(uint64_t env_id) {
    uint64_t size = 0;
    ok(plugin_.get_state(handle_, env_id, nullptr, 0, &size));
    std::vector<double> state(size);
    ok(plugin_.get_state(handle_, env_id, state.data(), state.size(), &size));
    return state;
  }
  void set_state(uint64_t env_id, const std::vector<double>& state) {
    ok(plugin_.set_state(handle_, env_id, state.data(), state.size()));
  }
  // The screen's bytes (valid until the next call) and its shape.
  const uint8_t* render(uint64_t env_id, int64_t shape[3]) {
    const uint8_t* pixels = nullptr;
    ok(plugin_.render(handle_, env_id, &pixels, shape));
    return pixels;
  }

  void ok(int32_t status) const {
    if (status != TORCHPOOL_OK) raise(status);
  }

  // Throws what last_error() describes, as this module's exception.
  [[noreturn]] void raise(int32_t status) const {
    const TorchpoolError& error = *plugin_.last_error();
    const std::string message = error.message;
    switch (status) {
      case TORCHPOOL_INTERRUPTED:
        throw CheckStopped{};
      case TORCHPOOL_INPUT_ERROR:
        throw InputError(message);
      case TORCHPOOL_VALUE_ERROR:
        throw std::invalid_argument(message);
      case TORCHPOOL_MEMORY_ERROR:
        throw std::bad_alloc();
      case TORCHPOOL_ENV_FAILURE: {
        std::vector<std::string> texts(error.failure_messages, error.failure_messages + error.failure_count);
        throw EnvFailure(error.block == TORCHPOOL_RESET_BATCH ? EnvFailure::kResetBatch : error.block, error.rows,
                         std::vector<int64_t>(error.env_ids, error.env_ids + error.failure_count), std::move(texts));
      }
      default:
        throw std::runtime_error(message);
    }
  }

 private:
  const TorchpoolPlugin& plugin_;
  TorchpoolExecutor* handle_;
  size_t num_blocks_;
};

}  // namespace torchpool
