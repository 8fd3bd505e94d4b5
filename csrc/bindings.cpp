// bindings.cpp — the pybind11 module torchpool._core.
//
// The Python side of the engine, knowing no env family: each family is a
// module of its own that hands its executors over through the C plug-in
// interface (core/plugin_abi.h; plugin_host.h is this side of it), whose ABI
// version is checked here. Python (torchpool/pool.py) owns all memory and
// passes raw addresses; the GIL is released whenever C++ waits, and
// reacquired only to poll for Ctrl-C.
//
// PoolCore wraps an executor with what only the Python boundary needs: the
// owner object of each block (kept alive while the executor writes there, and
// handed back by the very call that filled it, so Python never pairs a block
// with a stale buffer after an interrupt), a guard against two Python threads
// in one pool, and a guard against use after fork().
#include <atomic>
#include <cstring>
#include <optional>

#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#include <unistd.h>
#endif

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "core/episode.h"
#include "core/wait.h"
#include "crash_report.h"
#include "plugin_host.h"

namespace py = pybind11;
using namespace torchpool;

namespace {

// The task kwargs as the C interface passes them, typed as Python has them
// (bool before int: bool is an int subclass), and the storage they point into.
struct Kwargs {
  std::vector<TorchpoolKwarg> values;
  std::vector<std::string> names, texts;
  std::vector<std::vector<double>> sequences;

  explicit Kwargs(const py::dict& kwargs) {
    const size_t n = kwargs.size();
    names.reserve(n), texts.reserve(n), sequences.reserve(n);  // no reallocation: values point into them
    for (auto item : kwargs) {
      TorchpoolKwarg value{};
      names.push_back(py::cast<std::string>(item.first));
      value.name = names.back().c_str();
      const py::handle given = item.second;
      if (py::isinstance<py::str>(given)) {
        texts.push_back(py::cast<std::string>(given));
        value.type = TORCHPOOL_KWARG_STR, value.text = texts.back().c_str();
      } else if (py::isinstance<py::tuple>(given) || py::isinstance<py::list>(given)) {
        sequences.push_back(py::cast<std::vector<double>>(given));
        value.type = TORCHPOOL_KWARG_FLOATS, value.reals = sequences.back().data(),
        value.count = sequences.back().size();
      } else if (py::isinstance<py::bool_>(given)) {
        value.type = TORCHPOOL_KWARG_BOOL, value.integer = given.cast<bool>() ? 1 : 0;
      } else if (py::isinstance<py::int_>(given)) {
        value.type = TORCHPOOL_KWARG_INT, value.integer = given.cast<int64_t>();
      } else if (py::isinstance<py::float_>(given)) {
        value.type = TORCHPOOL_KWARG_FLOAT, value.real = given.cast<double>();
      } else {
        throw std::invalid_argument("task kwarg '" + names.back() + "' has a type the C++ families cannot take: " +
                                    py::cast<std::string>(py::str(py::type::of(given))));
      }
      values.push_back(value);
    }
  }
};

// Bumped in the child of every fork(): a pool made under another value was
// inherited, and its worker threads exist only in the parent.
std::atomic<uint64_t> fork_generation{0};

py::object env_error_factory;  // torchpool.errors._from_core, set at import

// Test hook (torchpool.testing.inject_interrupts): every k-th poll raises
// KeyboardInterrupt as a Ctrl-C landing there would, so the tests reach the
// second-Ctrl-C paths deterministically. Read and written with the GIL held.
int64_t inject_every = 0;
int64_t polls_since_injected = 0;

// What a wait's Ctrl-C poll saw: the Python exception to raise once the
// executor has returned (it cannot travel through the plug-in as one).
struct CheckContext {
  std::optional<py::error_already_set> error;
};

// Polls for Ctrl-C while C++ sleeps with the GIL released (a TorchpoolCheck):
// nonzero stops the wait, with the exception kept in the context.
int32_t check_signals(void* context) noexcept {
  py::gil_scoped_acquire gil;
  auto& seen = *static_cast<CheckContext*>(context);
  if (inject_every > 0 && ++polls_since_injected >= inject_every) {
    polls_since_injected = 0;
    PyErr_SetNone(PyExc_KeyboardInterrupt);
  } else if (PyErr_CheckSignals() == 0) {
    return 0;
  }
  seen.error.emplace();  // takes the exception the poll raised
  return 1;
}

template <class T>
const T* address(uintptr_t value) {
  return reinterpret_cast<const T*>(value);
}

std::vector<int64_t> shape_of(const int64_t* shape, uint32_t ndim) { return {shape, shape + ndim}; }

py::list layout_to_list(const TorchpoolLayout& layout) {
  py::list fields;
  for (uint64_t i = 0; i < layout.field_count; ++i) {
    const TorchpoolField& field = layout.fields[i];
    fields.append(py::make_tuple(field.name, field.dtype, shape_of(field.shape, field.ndim), field.offset));
  }
  return fields;
}

// pool.schedule: the plan, with times in microseconds.
py::dict schedule_to_dict(const TorchpoolSchedule& plan) {
  py::dict d;
  d["mode"] = plan.mode;
  d["worker_threads"] = plan.worker_threads;
  d["envs_per_item"] = plan.envs_per_item;  // in a push of every env
  d["caller_runs_items"] = plan.caller_runs_items != 0;
  d["caller_spin_polls"] = plan.caller_spin_polls;
  d["caller_last_items_spin_us"] = plan.caller_last_items_spin_ns / 1e3;
  d["split_tail_substeps"] = plan.split_substeps;
  d["build_threads"] = plan.build_threads;
  d["step_cost_us"] = plan.step_cost_ns / 1e3;
  return d;
}

std::vector<double> values_of(const double* values, uint64_t count) { return {values, values + count}; }

py::dict spec_to_dict(const TorchpoolSpec& spec) {
  py::list observation;  // one dict per field, in the family's order
  for (uint64_t i = 0; i < spec.observation_count; ++i) {
    const TorchpoolObservationField& field = spec.observations[i];
    py::dict entry;
    entry["name"] = field.name;
    entry["shape"] = shape_of(field.shape, field.ndim);
    entry["dtype"] = field.dtype;
    entry["low"] = values_of(field.low, field.bound_count);
    entry["high"] = values_of(field.high, field.bound_count);
    observation.append(entry);
  }
  py::dict action;
  action["discrete"] = spec.action_discrete != 0;
  action["n"] = spec.num_actions;
  action["shape"] = shape_of(spec.action_shape, spec.action_ndim);
  action["low"] = values_of(spec.action_low, spec.action_bound_count);
  action["high"] = values_of(spec.action_high, spec.action_bound_count);
  py::dict result;
  result["observation"] = observation;
  result["action"] = action;
  result["max_episode_steps"] = spec.max_episode_steps;
  result["step_cost_ns"] = spec.step_cost_ns;
  return result;
}

class PoolCore {
 public:
  explicit PoolCore(std::unique_ptr<PluginExecutor> executor)
      : executor_(std::move(executor)),
        owners_(executor_->num_blocks(), py::none()),
        generation_(fork_generation.load()) {
#if defined(__unix__) || defined(__APPLE__)
    pid_ = static_cast<int64_t>(getpid());
#endif
  }

  ~PoolCore() {
    if (inherited()) executor_->forget_threads();
    py::gil_scoped_release release;  // joining needs no Python
    executor_.reset();
  }

  PluginExecutor& executor() { return *executor_; }

  // Entered by every call that drives the pool.
  class Call {
   public:
    Call(PoolCore& core, const char* name) : core_(core) {
      if (core.inherited())
        throw std::runtime_error(
            std::string("Pool.") + name + "(): this pool was made in process " + std::to_string(core.pid_) +
            " and reached this one through fork(); its worker threads exist only there. Make the pool in the "
            "child process (after the fork), or start workers with the 'spawn' method "
            "(multiprocessing.get_context('spawn'), DataLoader(multiprocessing_context='spawn')).");
      core.refuse_while_busy(name);
      core.busy_ = name;  // the GIL is held here and when it is cleared
    }
    ~Call() { core_.busy_ = nullptr; }
    Call(const Call&) = delete;
    Call& operator=(const Call&) = delete;

   private:
    PoolCore& core_;
  };

  bool inherited() const { return generation_ != fork_generation.load(std::memory_order_relaxed); }

  // The ledger's counters, read between calls: while another thread is inside one (its GIL released) the
  // ledger is being written, so the read is refused as a second call would be.
  TorchpoolCounters counters(const char* name) const {
    refuse_while_busy(name);
    return executor_->counters();
  }

  bool undo_recv() {
    Call call(*this, "undo_recv");
    return executor_->undo_recv();
  }

  bool wakes_workers(size_t count) const {
    refuse_while_busy("wakes_workers");
    return executor_->wakes_workers(count);
  }

  void set_block(size_t block, uintptr_t base, py::object owner) {
    Call call(*this, "set_block");
    check_block(block);
    settle_first();  // an abandoned step's rows may still land in this block
    executor_->set_block(block, reinterpret_cast<uint8_t*>(base));
    owners_[block] = std::move(owner);
  }

  // table: int64 [fields, 2] of (address, row stride in bytes), in block_layout() order.
  void set_block_targets(size_t block, uintptr_t table, py::object owner) {
    Call call(*this, "set_block_targets");
    check_block(block);
    settle_first();  // an abandoned step's rows may still land in this block
    executor_->set_block_targets(block, reinterpret_cast<const int64_t*>(table));
    owners_[block] = std::move(owner);
  }

  void set_reset_buffer(uintptr_t base, py::object owner) {
    Call call(*this, "set_reset_buffer");
    settle_first();  // an abandoned reset() may still write the old buffer
    executor_->set_reset_buffer(reinterpret_cast<uint8_t*>(base));
    reset_owner_ = std::move(owner);
  }

  py::object owner(size_t block) const {
    check_block(block);
    return owners_[block];
  }
  py::object reset_owner() const { return reset_owner_; }

  void send(uintptr_t actions, int dtype, uintptr_t ids, size_t count) {
    Call call(*this, "send");
    settle_first();
    executor_->send(address<void>(actions), dtype, address<int64_t>(ids), count);
  }

  // send() to every env, then wait — the sync step in one call; returns the
  // owner of the block that holds the batch. record != 0: the actions, once
  // accepted, are also copied there (torchpool.stream's rollout action row).
  py::object step(uintptr_t actions, int dtype, uintptr_t record) {
    Call call(*this, "step");
    return owners_[waited([&](CheckContext& seen, uint64_t& block) {
      return executor_->step(address<void>(actions), dtype, reinterpret_cast<void*>(record), check_signals, &seen,
                             &block);
    })];
  }

  py::object recv() {
    Call call(*this, "recv");
    return owners_[waited(
        [&](CheckContext& seen, uint64_t& block) { return executor_->recv(check_signals, &seen, &block); })];
  }

  void async_reset(uintptr_t ids, size_t count) {
    Call call(*this, "async_reset");
    settle_first();
    executor_->async_reset(address<int64_t>(ids), count);
  }

  py::object reset(uintptr_t ids, size_t count, uintptr_t seeds) {
    Call call(*this, "reset");
    waited([&](CheckContext& seen, uint64_t&) {
      return executor_->reset(address<int64_t>(ids), count, address<uint64_t>(seeds), check_signals, &seen);
    });
    return reset_owner_;
  }

  py::object step_some(uintptr_t actions, int dtype, uintptr_t ids, size_t count) {
    Call call(*this, "step_some");
    waited([&](CheckContext& seen, uint64_t&) {
      return executor_->step_some(reinterpret_cast<const void*>(actions), dtype, address<int64_t>(ids), count,
                                  check_signals, &seen);
    });
    return reset_owner_;
  }

  std::vector<double> get_state(size_t env_id) {
    Call call(*this, "get_state");
    return executor_->get_state(env_id);
  }

  bool has_state() const { return executor_->spec().has_state != 0; }
  bool renders() const { return executor_->spec().renders != 0; }

  // (RGB bytes, shape) of env `env_id`'s screen.
  py::tuple render(size_t env_id) {
    Call call(*this, "render");
    int64_t shape[3] = {0, 0, 0};
    const uint8_t* pixels = executor_->render(env_id, shape);
    return py::make_tuple(py::bytes(reinterpret_cast<const char*>(pixels), shape[0] * shape[1] * shape[2]),
                          std::vector<int64_t>(shape, shape + 3));
  }

  void set_state(size_t env_id, const std::vector<double>& state) {
    Call call(*this, "set_state");
    executor_->set_state(env_id, state);
  }

  void close() {
    if (inherited()) {
      executor_->forget_threads();
      return;
    }
    Call call(*this, "close");
    int32_t status = TORCHPOOL_OK;
    {
      py::gil_scoped_release release;
      status = executor_->close();
    }
    executor_->ok(status);
  }

 private:
  void refuse_while_busy(const char* name) const {
    if (busy_ != nullptr)
      throw std::runtime_error(std::string("Pool.") + name + "() was called while another thread is inside Pool." +
                               busy_ +
                               "(): a pool is driven by one thread at a time (give each thread its "
                               "own pool, or hold a lock around its calls)");
  }

  void check_block(size_t block) const {
    if (block >= owners_.size()) throw InputError("block " + std::to_string(block) + " is out of range");
  }

  // The calls that do not wait still finish an abandoned call first (it waits
  // up to one env step per thread): without the GIL, polling for Ctrl-C.
  void settle_first() {
    if (!executor_->must_settle()) return;
    waited([&](CheckContext& seen, uint64_t&) { return executor_->settle(check_signals, &seen); });
  }

  // Runs a blocking call without the GIL, then raises its failure: an
  // interrupt as the exception the Ctrl-C poll saw, an EnvFailure as
  // torchpool.EnvError with its batch. Returns the block the call filled.
  template <class F>
  size_t waited(F&& call) {
    CheckContext seen;
    uint64_t block = 0;
    int32_t status = TORCHPOOL_OK;
    {
      py::gil_scoped_release release;
      status = call(seen, block);
    }
    if (status == TORCHPOOL_OK) return block;
    try {
      executor_->raise(status);
    } catch (const CheckStopped&) {
      if (seen.error) throw *seen.error;
      PyErr_SetNone(PyExc_KeyboardInterrupt);
      throw py::error_already_set();
    } catch (const EnvFailure& failure) {
      const bool reset = failure.block == EnvFailure::kResetBatch;
      py::object error = env_error_factory(failure.env_ids, failure.messages,
                                           reset ? reset_owner_ : owners_[failure.block], failure.rows, reset);
      PyErr_SetObject(reinterpret_cast<PyObject*>(Py_TYPE(error.ptr())), error.ptr());
      throw py::error_already_set();
    }
  }

  std::unique_ptr<PluginExecutor> executor_;
  std::vector<py::object> owners_;
  py::object reset_owner_ = py::none();
  const char* busy_ = nullptr;  // the call a thread is in; read and written with the GIL held
  uint64_t generation_;
  int64_t pid_ = 0;
};

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "torchpool's C++ executor (internal; use torchpool.make)";
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);
#if defined(__unix__) || defined(__APPLE__)
  pthread_atfork(nullptr, nullptr, [] { fork_generation.fetch_add(1); });
#endif
  m.def(
      "_inject_interrupts", [](int64_t every) { inject_every = every, polls_since_injected = 0; },
      "test hook: every k-th Ctrl-C poll of a waiting call raises KeyboardInterrupt (0: off)");
  m.def("set_env_error_factory", [](py::object factory) { env_error_factory = std::move(factory); });
  // The factory outlives every pool; drop it before the interpreter finalizes.
  m.add_object("_cleanup", py::capsule([] { env_error_factory = py::object(); }));

  py::class_<PoolCore>(m, "Executor")
      .def("spec", [](PoolCore& c) { return spec_to_dict(c.executor().spec()); })
      .def("block_layout", [](PoolCore& c) { return layout_to_list(c.executor().block_layout()); })
      .def("reset_layout", [](PoolCore& c) { return layout_to_list(c.executor().reset_layout()); })
      .def_property_readonly("block_bytes", [](PoolCore& c) { return c.executor().block_layout().bytes; })
      .def_property_readonly("reset_bytes", [](PoolCore& c) { return c.executor().reset_layout().bytes; })
      .def_property_readonly("rows_sent", [](PoolCore& c) { return c.counters("rows_sent").rows_sent; })
      .def_property_readonly("rows_received", [](PoolCore& c) { return c.counters("rows_received").rows_received; })
      .def_property_readonly("in_flight", [](PoolCore& c) { return c.counters("in_flight").in_flight; })
      .def_property_readonly("next_block", [](PoolCore& c) { return c.counters("next_block").next_block; })
      .def_property_readonly("inherited", &PoolCore::inherited)
      .def("set_block", &PoolCore::set_block)
      .def("set_block_targets", &PoolCore::set_block_targets)
      .def("set_reset_buffer", &PoolCore::set_reset_buffer)
      .def("owner", &PoolCore::owner)
      .def("reset_owner", &PoolCore::reset_owner)
      .def("send", &PoolCore::send)
      .def("step", &PoolCore::step, py::arg("actions"), py::arg("dtype"), py::arg("record") = 0)
      .def("recv", &PoolCore::recv)
      .def("undo_recv", &PoolCore::undo_recv)
      .def("async_reset", &PoolCore::async_reset)
      .def("reset", &PoolCore::reset)
      .def("step_some", &PoolCore::step_some)
      .def("wakes_workers", &PoolCore::wakes_workers)
      .def("schedule", [](PoolCore& c) { return schedule_to_dict(c.executor().schedule()); })
      .def("get_state", &PoolCore::get_state)
      .def_property_readonly("has_state", &PoolCore::has_state)
      .def_property_readonly("renders", &PoolCore::renders)
      .def("render", &PoolCore::render)
      .def("set_state", &PoolCore::set_state)
      .def("close", &PoolCore::close);

  // What Python shares with the core, defined once here (spec.h, episode.h, wait.h).
  py::dict dtypes;
  for (Dtype dtype : {Dtype::Bool, Dtype::UInt8, Dtype::Int32, Dtype::Int64, Dtype::Float32, Dtype::Float64})
    dtypes[dtype_name(dtype)] = static_cast<int>(dtype);
  m.attr("DTYPE_CODES") = dtypes;
  m.attr("AUTORESET_CODES") = py::dict(py::arg("same_step") = static_cast<int>(Autoreset::kSameStep),
                                       py::arg("next_step") = static_cast<int>(Autoreset::kNextStep),
                                       py::arg("disabled") = static_cast<int>(Autoreset::kDisabled));
  EnvSpec one_field;
  one_field.observations = {{{}, Dtype::Float32, {}, {}}};
  std::vector<std::string> fixed;
  for (const FieldSpec& field : output_fields(one_field, Autoreset::kSameStep)) fixed.push_back(field.name);
  m.attr("FIXED_KEYS") = py::tuple(py::cast(fixed));  // the columns every step has, in order
  m.attr("DEFAULT_SPIN_POLLS") = SpinPolicy{}.polls;
  m.attr("PLUGIN_CAPSULE") = TORCHPOOL_PLUGIN_CAPSULE;
  m.attr("ABI") = TORCHPOOL_PLUGIN_ABI_VERSION;  // the plug-in ABI a family module must speak
  m.def("install_crash_report", &install_crash_report, py::arg("path") = "",
        "on SIGSEGV/SIGBUS/SIGFPE/SIGILL/SIGABRT, write the native stack (with module names) to stderr "
        "and to `path` if given, then die as before (torchpool.testing.crash_report)");

  m.def(
      "make",
      [](py::capsule plugin_capsule, const std::string& family, const py::dict& kwargs, size_t num_envs,
         size_t batch_size, size_t num_blocks, size_t num_threads, int64_t thread_affinity_offset, uint64_t seed,
         int autoreset, int obs_dtype, int64_t max_episode_steps, int32_t spin_polls, uint32_t schedule_off) {
        if (std::string(plugin_capsule.name() ? plugin_capsule.name() : "") != TORCHPOOL_PLUGIN_CAPSULE)
          throw InputError("not a torchpool family plugin (a capsule named " + std::string(TORCHPOOL_PLUGIN_CAPSULE) +
                           ")");
        const TorchpoolPlugin& plugin = PluginExecutor::checked(plugin_capsule.get_pointer<TorchpoolPlugin>(), family);
        const Kwargs typed(kwargs);
        TorchpoolOptions options{};
        options.num_envs = num_envs;
        options.batch_size = batch_size;
        options.num_blocks = num_blocks;
        options.num_threads = num_threads;
        options.thread_affinity_offset = thread_affinity_offset;
        options.seed = seed;
        options.autoreset = autoreset;
        options.obs_dtype = obs_dtype;
        options.max_episode_steps = max_episode_steps;
        options.spin_polls = spin_polls;
        options.schedule_off = schedule_off;
        // The envs (ROMs, models, worker processes) are built without the GIL, polling for Ctrl-C.
        CheckContext seen;
        std::unique_ptr<PluginExecutor> made;
        try {
          py::gil_scoped_release release;
          made = std::make_unique<PluginExecutor>(plugin, family, typed.values, options, check_signals, &seen);
        } catch (const CheckStopped&) {
          if (seen.error) throw *seen.error;
          PyErr_SetNone(PyExc_KeyboardInterrupt);
          throw py::error_already_set();
        }
        return std::make_unique<PoolCore>(std::move(made));
      },
      py::arg("plugin"), py::arg("family"), py::arg("kwargs"), py::arg("num_envs"), py::arg("batch_size"),
      py::arg("num_blocks"), py::arg("num_threads"), py::arg("thread_affinity_offset"), py::arg("seed"),
      py::arg("autoreset"), py::arg("obs_dtype"), py::arg("max_episode_steps"), py::arg("spin_polls"),
      py::arg("schedule_off") = 0);
}
