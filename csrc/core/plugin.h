// plugin.h — a family module's side of the C plug-in interface (plugin_abi.h).
//
// Every env family is its own Python extension module (torchpool._classic,
// _mujoco, _atari, _testing, _dmc, _process; a user's compiled header), built
// against these headers. Its executors (Executor<Env>, executor.h) live and
// run inside the module; the core module reaches them only through the
// TorchpoolPlugin table that plugin_table() fills here: every C++ object stays
// on this side, every exception is caught here and becomes a status and a
// message (last_error()), and the caller's Ctrl-C check is a C callback.
// So the core and a family may be built by different compilers.
//
//   static const TorchpoolPlugin* table = torchpool::plugin_table({torchpool::family<CartPole>("CartPole"), ...});
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "executor.h"
#include "plugin_abi.h"

namespace torchpool {

using ExecutorFactory = std::unique_ptr<ExecutorBase> (*)(const Config&, const ExecutorOptions&);

// One family of a module: its name (the registry's EnvEntry.family), factory
// and the task kwargs its Model declares (empty for the built-in families,
// whose kwargs torchpool/registry.py declares).
struct FamilyEntry {
  std::string name;
  ExecutorFactory make;
  std::vector<TaskKwarg> kwargs;
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

namespace plugin_detail {

// Thrown by the C check when the caller asks to stop; never leaves this module.
struct Interrupted {};

// The last failure on this thread, kept in storage that outlives the call that reports it.
struct LastError {
  TorchpoolError view{};
  std::string message;
  std::vector<int64_t> env_ids;
  std::vector<std::string> failure_texts;
  std::vector<const char*> failure_messages;

  void set(TorchpoolStatus status, std::string text) {
    message = std::move(text);
    env_ids.clear(), failure_texts.clear(), failure_messages.clear();
    view = TorchpoolError{};
    view.status = status;
    view.message = message.c_str();
  }
};

inline LastError& last_error() {
  static thread_local LastError error;
  return error;
}

inline const TorchpoolError* last_error_view() { return &last_error().view; }

// Runs f, turning every exception into a status (and last_error()).
template <class F>
int32_t guarded(F&& f) noexcept {
  LastError& error = last_error();
  try {
    f();
    return TORCHPOOL_OK;
  } catch (const Interrupted&) {
    error.set(TORCHPOOL_INTERRUPTED, "interrupted");
  } catch (const EnvFailure& failure) {
    error.set(TORCHPOOL_ENV_FAILURE, failure.what());
    error.env_ids = failure.env_ids;
    error.failure_texts = failure.messages;
    for (const std::string& text : error.failure_texts) error.failure_messages.push_back(text.c_str());
    error.view.block = failure.block == EnvFailure::kResetBatch ? TORCHPOOL_RESET_BATCH : failure.block;
    error.view.rows = failure.rows;
    error.view.failure_count = error.env_ids.size();
    error.view.env_ids = error.env_ids.data();
    error.view.failure_messages = error.failure_messages.data();
  } catch (const InputError& input) {
    error.set(TORCHPOOL_INPUT_ERROR, input.what());
  } catch (const std::invalid_argument& value) {
    error.set(TORCHPOOL_VALUE_ERROR, value.what());
  } catch (const std::bad_alloc&) {
    error.set(TORCHPOOL_MEMORY_ERROR, "out of memory");
  } catch (const std::exception& other) {
    error.set(TORCHPOOL_RUNTIME_ERROR, other.what());
  } catch (...) {
    error.set(TORCHPOOL_RUNTIME_ERROR, "an unknown C++ exception");
  }
  return error.view.status;
}

// What an executor handle holds: the executor and the C views of its spec and layouts.
struct Handle {
  std::unique_ptr<ExecutorBase> executor;
  TorchpoolSpec spec{};
  std::vector<TorchpoolObservationField> observations;
  TorchpoolLayout block_layout{}, reset_layout{};
  std::vector<TorchpoolField> block_fields, reset_fields;
  std::vector<uint8_t> pixels;  // render()'s last screen

  explicit Handle(std::unique_ptr<ExecutorBase> made) : executor(std::move(made)) {
    const EnvSpec& env = executor->spec();
    for (const ObservationSpec& field : env.observations)
      observations.push_back({field.name.c_str(), static_cast<int32_t>(field.dtype),
                              static_cast<uint32_t>(field.shape.size()), field.shape.data(), field.low.size(),
                              field.low.data(), field.high.data()});
    spec.observation_count = observations.size();
    spec.observations = observations.data();
    spec.action_discrete = env.action.discrete;
    spec.num_actions = env.action.num_actions;
    spec.action_ndim = static_cast<uint32_t>(env.action.shape.size());
    spec.action_shape = env.action.shape.data();
    spec.action_bound_count = env.action.low.size();
    spec.action_low = env.action.low.data();
    spec.action_high = env.action.high.data();
    spec.max_episode_steps = env.max_episode_steps;
    spec.step_cost_ns = env.step_cost_ns;
    spec.has_state = executor->has_state();
    spec.renders = executor->renders();
    describe(executor->block_layout(), block_fields, block_layout);
    describe(executor->reset_layout(), reset_fields, reset_layout);
  }

  static void describe(const Layout& layout, std::vector<TorchpoolField>& fields, TorchpoolLayout& out) {
    for (size_t i = 0; i < layout.fields().size(); ++i) {
      const FieldSpec& field = layout.fields()[i];
      fields.push_back({field.name.c_str(), static_cast<int32_t>(field.dtype),
                        static_cast<uint32_t>(field.shape.size()), field.shape.data(), layout.offset(i)});
    }
    out = {fields.size(), fields.data(), layout.bytes()};
  }
};

inline Handle& handle(TorchpoolExecutor* executor) { return *reinterpret_cast<Handle*>(executor); }
inline const Handle& handle(const TorchpoolExecutor* executor) { return *reinterpret_cast<const Handle*>(executor); }
inline ExecutorBase& base(TorchpoolExecutor* executor) { return *handle(executor).executor; }
inline const ExecutorBase& base(const TorchpoolExecutor* executor) { return *handle(executor).executor; }

// The caller's C check as the executor's InterruptCheck: a nonzero answer unwinds as Interrupted.
inline InterruptCheck interrupt_check(TorchpoolCheck check, void* context) {
  if (check == nullptr) return nullptr;
  return [check, context] {
    if (check(context) != 0) throw Interrupted{};
  };
}

// A kwarg value from the C side, into the typed Config (spec.h).
inline void add_kwarg(Config& config, const TorchpoolKwarg& kwarg) {
  const std::string name = kwarg.name;
  switch (kwarg.type) {
    case TORCHPOOL_KWARG_INT:
      config.integers[name] = kwarg.integer;
      return;
    case TORCHPOOL_KWARG_FLOAT:
      config.reals[name] = kwarg.real;
      return;
    case TORCHPOOL_KWARG_BOOL:
      config.flags[name] = kwarg.integer != 0;
      return;
    case TORCHPOOL_KWARG_STR:
      config.strings[name] = kwarg.text;
      return;
    case TORCHPOOL_KWARG_FLOATS:
      config.sequences[name] = std::vector<double>(kwarg.reals, kwarg.reals + kwarg.count);
      return;
  }
  throw std::invalid_argument("task kwarg '" + name + "' has an unknown type code " + std::to_string(kwarg.type));
}

// A family that declares its kwargs (TaskKwarg) gets exactly those, each of its declared type.
inline void check_declared(const FamilyEntry& family, const TorchpoolKwarg* kwargs, uint64_t count) {
  if (family.kwargs.empty()) return;
  static constexpr const char* kTypeNames[] = {"int", "float", "bool", "str", "sequence"};
  for (uint64_t i = 0; i < count; ++i) {
    const TaskKwarg* declared = nullptr;
    for (const TaskKwarg& candidate : family.kwargs)
      if (candidate.name == kwargs[i].name) declared = &candidate;
    if (declared == nullptr)
      throw std::invalid_argument("family '" + family.name + "' declares no task kwarg '" + kwargs[i].name + "'");
    const bool widened = declared->type == "float" && kwargs[i].type == TORCHPOOL_KWARG_INT;
    const int32_t type = kwargs[i].type;
    if (!widened && (type < 0 || type > 4 || declared->type != kTypeNames[type]))
      throw std::invalid_argument("family '" + family.name + "': task kwarg '" + declared->name + "' is declared " +
                                  declared->type + ", got " + (type >= 0 && type <= 4 ? kTypeNames[type] : "?"));
  }
}

// The module's families, kept with their C views for the process's lifetime.
struct Families {
  std::vector<FamilyEntry> entries;
  std::vector<std::vector<TorchpoolKwargDeclaration>> declarations;
  std::vector<TorchpoolFamily> views;
  TorchpoolPlugin table{};
};

inline TorchpoolExecutor* make(const TorchpoolPlugin* self, const char* family, const TorchpoolKwarg* kwargs,
                               uint64_t kwarg_count, const TorchpoolOptions* options, TorchpoolCheck check,
                               void* check_context) {
  Handle* made = nullptr;
  const int32_t status = guarded([&] {
    const auto& families = *static_cast<const Families*>(self->context);
    const FamilyEntry* entry = nullptr;
    for (const FamilyEntry& candidate : families.entries)
      if (candidate.name == family) entry = &candidate;
    if (entry == nullptr) throw InputError("unknown env family '" + std::string(family) + "'");
    check_declared(*entry, kwargs, kwarg_count);
    Config config;
    for (uint64_t i = 0; i < kwarg_count; ++i) add_kwarg(config, kwargs[i]);
    ExecutorOptions executor_options;
    executor_options.num_envs = options->num_envs;
    executor_options.batch_size = options->batch_size;
    executor_options.num_blocks = options->num_blocks;
    executor_options.num_threads = options->num_threads;
    executor_options.thread_affinity_offset = options->thread_affinity_offset;
    executor_options.seed = options->seed;
    executor_options.autoreset = static_cast<Autoreset>(options->autoreset);
    executor_options.obs_dtype = static_cast<Dtype>(options->obs_dtype);
    executor_options.max_episode_steps = options->max_episode_steps;
    executor_options.spin.polls = options->spin_polls;
    executor_options.schedule_off = options->schedule_off;
    executor_options.build_check = interrupt_check(check, check_context);
    std::unique_ptr<ExecutorBase> executor = entry->make(config, executor_options);
    // NOTE [Every kwarg is read] (spec.h): the family's Model has read its kwargs by now.
    if (const std::vector<std::string> unread = config.unread(); !unread.empty())
      throw InputError("family '" + entry->name + "' never read the task kwarg '" + unread.front() +
                       "' it was given (" + std::to_string(unread.size()) +
                       " unread): its C++ reads another name, or should Config::ignore() it on purpose");
    made = new Handle(std::move(executor));
  });
  return status == TORCHPOOL_OK ? reinterpret_cast<TorchpoolExecutor*>(made) : nullptr;
}

inline void destroy(TorchpoolExecutor* executor) { delete &handle(executor); }  // ~Executor closes and joins

inline void fill_table(Families& families) {
  for (const FamilyEntry& entry : families.entries) {
    std::vector<TorchpoolKwargDeclaration> declared;
    for (const TaskKwarg& kwarg : entry.kwargs)
      declared.push_back({kwarg.name.c_str(), kwarg.type.c_str(), kwarg.default_value.c_str(), kwarg.doc.c_str()});
    families.declarations.push_back(std::move(declared));
  }
  for (size_t i = 0; i < families.entries.size(); ++i)
    families.views.push_back(
        {families.entries[i].name.c_str(), families.declarations[i].size(), families.declarations[i].data()});
  TorchpoolPlugin& t = families.table;
  t.abi_version = TORCHPOOL_PLUGIN_ABI_VERSION;
  t.struct_size = sizeof(TorchpoolPlugin);
#if defined(__VERSION__)
  t.built_with = __VERSION__;
#else
  t.built_with = "unknown compiler";
#endif
  t.family_count = families.views.size();
  t.families = families.views.data();
  t.context = &families;
  t.last_error = &last_error_view;
  t.make = &make;
  t.destroy = &destroy;
  t.spec = [](const TorchpoolExecutor* e) { return &handle(e).spec; };
  t.block_layout = [](const TorchpoolExecutor* e) { return &handle(e).block_layout; };
  t.reset_layout = [](const TorchpoolExecutor* e) { return &handle(e).reset_layout; };
  t.schedule = [](const TorchpoolExecutor* e, TorchpoolSchedule* out) {
    return guarded([&] {
      const Schedule& plan = base(e).schedule();
      *out = {mode_name(plan.mode),   plan.worker_threads,    plan.envs_per_item(plan.num_envs),
              plan.caller_runs_items, plan.caller_spin_polls, plan.caller_last_items_spin_ns,
              plan.split_substeps,    plan.build_threads,     plan.step_cost_ns};
    });
  };
  t.counters = [](const TorchpoolExecutor* e, TorchpoolCounters* out) {
    return guarded([&] {
      const ExecutorBase& executor = base(e);
      *out = {executor.rows_sent(), executor.rows_received(), executor.in_flight(), executor.next_block()};
    });
  };
  t.wakes_workers = [](const TorchpoolExecutor* e, uint64_t count, int32_t* wakes) {
    return guarded([&] { *wakes = base(e).wakes_workers(count); });
  };
  t.must_settle = [](const TorchpoolExecutor* e, int32_t* must) {
    return guarded([&] { *must = base(e).must_settle(); });
  };
  t.set_block = [](TorchpoolExecutor* e, uint64_t block, uint8_t* address) {
    return guarded([&] { base(e).set_block(block, address); });
  };
  t.set_block_targets = [](TorchpoolExecutor* e, uint64_t block, const int64_t* table) {
    return guarded([&] {
      FieldTargets targets;
      for (size_t i = 0; i < handle(e).block_fields.size(); ++i) {
        targets.address[i] = reinterpret_cast<uint8_t*>(table[2 * i]);
        targets.row_stride[i] = static_cast<size_t>(table[2 * i + 1]);
      }
      base(e).set_block_targets(block, targets);
    });
  };
  t.set_reset_buffer = [](TorchpoolExecutor* e, uint8_t* address) {
    return guarded([&] { base(e).set_reset_buffer(address); });
  };
  t.send = [](TorchpoolExecutor* e, const void* actions, int32_t dtype, const int64_t* ids, uint64_t count) {
    return guarded([&] { base(e).send(actions, static_cast<Dtype>(dtype), ids, count); });
  };
  t.async_reset = [](TorchpoolExecutor* e, const int64_t* ids, uint64_t count) {
    return guarded([&] { base(e).async_reset(ids, count); });
  };
  t.step = [](TorchpoolExecutor* e, const void* actions, int32_t dtype, void* record, TorchpoolCheck check,
              void* context, uint64_t* block) {
    return guarded(
        [&] { *block = base(e).step(actions, static_cast<Dtype>(dtype), record, interrupt_check(check, context)); });
  };
  t.recv = [](TorchpoolExecutor* e, TorchpoolCheck check, void* context, uint64_t* block) {
    return guarded([&] { *block = base(e).recv(interrupt_check(check, context)); });
  };
  t.reset = [](TorchpoolExecutor* e, const int64_t* ids, uint64_t count, const uint64_t* seeds, TorchpoolCheck check,
               void* context) {
    return guarded([&] { base(e).reset(ids, count, seeds, interrupt_check(check, context)); });
  };
  t.step_some = [](TorchpoolExecutor* e, const void* actions, int32_t dtype, const int64_t* ids, uint64_t count,
                   TorchpoolCheck check, void* context) {
    return guarded(
        [&] { base(e).step_some(actions, static_cast<Dtype>(dtype), ids, count, interrupt_check(check, context)); });
  };
  t.settle = [](TorchpoolExecutor* e, TorchpoolCheck check, void* context) {
    return guarded([&] { base(e).settle(interrupt_check(check, context)); });
  };
  t.undo_recv = [](TorchpoolExecutor* e, int32_t* undone) { return guarded([&] { *undone = base(e).undo_recv(); }); };
  t.forget_threads = [](TorchpoolExecutor* e) { return guarded([&] { base(e).forget_threads(); }); };
  t.close = [](TorchpoolExecutor* e) { return guarded([&] { base(e).close(); }); };
  t.get_state = [](TorchpoolExecutor* e, uint64_t env_id, double* values, uint64_t capacity, uint64_t* size) {
    return guarded([&] {
      const std::vector<double> state = base(e).get_state(env_id);
      *size = state.size();
      if (values != nullptr && capacity >= state.size())
        std::memcpy(values, state.data(), state.size() * sizeof(double));
    });
  };
  t.set_state = [](TorchpoolExecutor* e, uint64_t env_id, const double* values, uint64_t count) {
    return guarded([&] { base(e).set_state(env_id, std::vector<double>(values, values + count)); });
  };
  t.render = [](TorchpoolExecutor* e, uint64_t env_id, const uint8_t** pixels, int64_t shape[3]) {
    return guarded([&] {
      Handle& h = handle(e);
      const std::vector<int64_t> dims = h.executor->render(env_id, h.pixels);
      for (size_t i = 0; i < 3; ++i) shape[i] = i < dims.size() ? dims[i] : 1;
      *pixels = h.pixels.data();
    });
  };
}

}  // namespace plugin_detail

// The module's plug-in table: built once, kept for the process's lifetime
// (modules are never unloaded, and pools hold executors made through it).
inline const TorchpoolPlugin* plugin_table(std::vector<FamilyEntry> entries) {
  auto* families = new plugin_detail::Families{std::move(entries), {}, {}, {}};
  plugin_detail::fill_table(*families);
  return &families->table;
}

}  // namespace torchpool
