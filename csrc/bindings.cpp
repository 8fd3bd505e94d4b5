// bindings.cpp — the pybind11 module torchpool._core.
//
// The only file that knows both Python and the env families: a registry maps
// each family's name to a factory of Executor<Env>. Python (torchpool/pool.py)
// owns all memory and passes raw addresses; the GIL is released whenever C++
// waits, and reacquired only to poll for Ctrl-C.
#include <cstring>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/executor.h"
#ifdef TORCHPOOL_WITH_ATARI
#include "envs/atari/atari.h"
#endif
#include "envs/classic/acrobot.h"
#include "envs/classic/cartpole.h"
#include "envs/classic/mountain_car.h"
#include "envs/classic/mountain_car_continuous.h"
#include "envs/classic/pendulum.h"
#include "envs/mujoco/ant.h"
#include "envs/mujoco/half_cheetah.h"
#include "envs/mujoco/hopper.h"
#include "envs/mujoco/humanoid.h"
#include "envs/mujoco/humanoidstandup.h"
#include "envs/mujoco/inverted_double_pendulum.h"
#include "envs/mujoco/inverted_pendulum.h"
#include "envs/mujoco/pusher.h"
#include "envs/mujoco/reacher.h"
#include "envs/mujoco/swimmer.h"
#include "envs/mujoco/walker2d.h"
#include "envs/testing/probe.h"

namespace py = pybind11;
using namespace torchpool;

namespace {

using Factory = std::function<std::unique_ptr<ExecutorBase>(const Config&, const ExecutorOptions&)>;

template <class Env>
Factory factory() {
  return [](const Config& config, const ExecutorOptions& options) {
    return std::make_unique<Executor<Env>>(config, options);
  };
}

// One line per family.
const std::map<std::string, Factory>& families() {
  static const std::map<std::string, Factory> registry = {
      {"CartPole", factory<classic::CartPole>()},
      {"Pendulum", factory<classic::Pendulum>()},
      {"MountainCar", factory<classic::MountainCar>()},
      {"MountainCarContinuous", factory<classic::MountainCarContinuous>()},
      {"Acrobot", factory<classic::Acrobot>()},
      {"Probe", factory<testing::Probe>()},
      {"Ant", factory<mujoco::Ant>()},
      {"HalfCheetah", factory<mujoco::HalfCheetah>()},
      {"Hopper", factory<mujoco::Hopper>()},
      {"Walker2d", factory<mujoco::Walker2d>()},
      {"Humanoid", factory<mujoco::Humanoid>()},
      {"HumanoidStandup", factory<mujoco::HumanoidStandup>()},
      {"Swimmer", factory<mujoco::Swimmer>()},
      {"Reacher", factory<mujoco::Reacher>()},
      {"Pusher", factory<mujoco::Pusher>()},
      {"InvertedPendulum", factory<mujoco::InvertedPendulum>()},
      {"InvertedDoublePendulum", factory<mujoco::InvertedDoublePendulum>()},
#ifdef TORCHPOOL_WITH_ATARI
      {"Atari", factory<atari::Atari>()},
#endif
  };
  return registry;
}

Config to_config(const py::dict& kwargs) {
  Config config;
  for (auto item : kwargs) {
    const auto key = py::cast<std::string>(item.first);
    if (py::isinstance<py::str>(item.second)) config.strings[key] = py::cast<std::string>(item.second);
    else if (py::isinstance<py::tuple>(item.second) || py::isinstance<py::list>(item.second))
      config.sequences[key] = py::cast<std::vector<double>>(item.second);
    else config.numbers[key] = py::cast<double>(item.second);
  }
  return config;
}

// Polls for Ctrl-C while C++ sleeps with the GIL released.
void check_signals() {
  py::gil_scoped_acquire gil;
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

template <class T>
const T* address(uintptr_t value) { return reinterpret_cast<const T*>(value); }

py::list layout_to_list(const Layout& layout) {
  py::list fields;
  for (size_t i = 0; i < layout.fields().size(); ++i) {
    const FieldSpec& field = layout.fields()[i];
    fields.append(py::make_tuple(field.name, static_cast<int>(field.dtype), field.shape, layout.offset(i)));
  }
  return fields;
}

py::dict spec_to_dict(const EnvSpec& spec) {
  py::dict observation, action;
  observation["shape"] = spec.observation.shape;
  observation["dtype"] = static_cast<int>(spec.observation.dtype);
  observation["low"] = spec.observation.low;
  observation["high"] = spec.observation.high;
  action["discrete"] = spec.action.discrete;
  action["n"] = spec.action.num_actions;
  action["shape"] = spec.action.shape;
  action["low"] = spec.action.low;
  action["high"] = spec.action.high;
  py::dict result;
  result["observation"] = observation;
  result["action"] = action;
  result["max_episode_steps"] = spec.max_episode_steps;
  result["step_cost_ns"] = spec.step_cost_ns;
  return result;
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "torchpool's C++ executor (internal; use torchpool.make)";
  py::register_exception<InputError>(m, "InputError", PyExc_ValueError);

  py::class_<ExecutorBase>(m, "Executor")
      .def("spec", [](const ExecutorBase& e) { return spec_to_dict(e.spec()); })
      .def("block_layout", [](const ExecutorBase& e) { return layout_to_list(e.block_layout()); })
      .def("reset_layout", [](const ExecutorBase& e) { return layout_to_list(e.reset_layout()); })
      .def_property_readonly("block_bytes", [](const ExecutorBase& e) { return e.block_layout().bytes(); })
      .def_property_readonly("reset_bytes", [](const ExecutorBase& e) { return e.reset_layout().bytes(); })
      .def("set_block", [](ExecutorBase& e, size_t block, uintptr_t base) {
        e.set_block(block, reinterpret_cast<uint8_t*>(base));
      })
      .def("set_reset_buffer", [](ExecutorBase& e, uintptr_t base) {
        e.set_reset_buffer(reinterpret_cast<uint8_t*>(base));
      })
      .def("send", [](ExecutorBase& e, uintptr_t actions, int dtype, uintptr_t ids, size_t count) {
        e.send(address<void>(actions), static_cast<Dtype>(dtype), address<int64_t>(ids), count);
      })
      // table: int64 [fields, 2] of (address, row stride in bytes), in block_layout() order.
      .def("set_block_targets", [](ExecutorBase& e, size_t block, uintptr_t table) {
        const auto* entries = address<int64_t>(table);
        FieldTargets targets;
        for (size_t i = 0; i < e.block_layout().fields().size(); ++i) {
          targets.address[i] = reinterpret_cast<uint8_t*>(entries[2 * i]);
          targets.row_stride[i] = static_cast<size_t>(entries[2 * i + 1]);
        }
        e.set_block_targets(block, targets);
      })
      // send() to every env, then wait for `block` — the sync step in one call.
      // record != 0: the actions, once accepted, are also copied there (a
      // rollout's action row): torchpool.stream saves a torch copy per step.
      .def("step", [](ExecutorBase& e, uintptr_t actions, int dtype, size_t block, uintptr_t record) {
        e.send(address<void>(actions), static_cast<Dtype>(dtype), nullptr, e.options().num_envs);
        if (record != 0)
          std::memcpy(reinterpret_cast<void*>(record), reinterpret_cast<const void*>(actions),
                      e.options().num_envs * e.spec().action.element_count() * dtype_size(static_cast<Dtype>(dtype)));
        py::gil_scoped_release release;
        e.wait_block(block, check_signals);
      }, py::arg("actions"), py::arg("dtype"), py::arg("block"), py::arg("record") = 0)
      .def("wait_block", [](ExecutorBase& e, size_t block) {
        py::gil_scoped_release release;
        e.wait_block(block, check_signals);
      })
      .def("async_reset", [](ExecutorBase& e, uintptr_t ids, size_t count) {
        e.async_reset(address<int64_t>(ids), count);
      })
      .def("reset", [](ExecutorBase& e, uintptr_t ids, size_t count, uintptr_t seeds) {
        py::gil_scoped_release release;
        e.reset(address<int64_t>(ids), count, address<uint64_t>(seeds), check_signals);
      })
      .def("wakes_workers", &ExecutorBase::wakes_workers)
      .def("worker_sleeps_in_calls", &ExecutorBase::worker_sleeps_in_calls)
      .def("get_state", &ExecutorBase::get_state)
      .def("set_state", &ExecutorBase::set_state)
      .def("close", [](ExecutorBase& e) {
        py::gil_scoped_release release;
        e.close();
      });

#ifdef TORCHPOOL_WITH_ATARI
  m.def("atari_rom_supported", &atari::rom_supported, "whether ALE can run this ROM file (by its MD5)");
  m.def("atari_emulation_rate", &atari::emulation_rate, py::call_guard<py::gil_scoped_release>(),
        "frames/s of bare ALE emulation in one thread (the benchmarks' raw limit)");
#endif
  m.def("families", [] {
    std::vector<std::string> names;
    for (const auto& entry : families()) names.push_back(entry.first);
    return names;
  });

  m.def(
      "make",
      [](const std::string& family, const py::dict& kwargs, size_t num_envs, size_t batch_size, size_t num_blocks,
         size_t num_threads, int64_t thread_affinity_offset, uint64_t seed, int autoreset, int obs_dtype,
         int64_t max_episode_steps, int32_t spin_polls) {
        auto it = families().find(family);
        if (it == families().end()) throw InputError("unknown env family '" + family + "'");
        ExecutorOptions options;
        options.num_envs = num_envs;
        options.batch_size = batch_size;
        options.num_blocks = num_blocks;
        options.num_threads = num_threads;
        options.thread_affinity_offset = thread_affinity_offset;
        options.seed = seed;
        options.autoreset = static_cast<Autoreset>(autoreset);
        options.obs_dtype = static_cast<Dtype>(obs_dtype);
        options.max_episode_steps = max_episode_steps;
        options.spin.polls = spin_polls;
        return it->second(to_config(kwargs), options);
      },
      py::arg("family"), py::arg("kwargs"), py::arg("num_envs"), py::arg("batch_size"), py::arg("num_blocks"),
      py::arg("num_threads"), py::arg("thread_affinity_offset"), py::arg("seed"), py::arg("autoreset"),
      py::arg("obs_dtype"), py::arg("max_episode_steps"), py::arg("spin_polls"));
}
