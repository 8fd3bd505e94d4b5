// module.cpp — torchpool._process: the process family (Python envs in worker
// processes) and the shared region's handles for both sides. It never links
// libtorch and needs no torch at import, so worker processes load it alone.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <new>
#include <string>
#include <tuple>
#include <vector>

#include "envs/process/process_env.h"
#include "envs/process/worker_channel.h"
#include "family_module.h"

namespace py = pybind11;
using namespace torchpool;
using namespace torchpool::process;

namespace {

// (num_envs, num_workers, action_size, column_bytes, error_bytes), as Python passes it to both processes.
using LayoutArgs = std::tuple<size_t, size_t, size_t, std::vector<size_t>, size_t>;

RegionLayout layout_of(const LayoutArgs& args) {
  return RegionLayout(std::get<0>(args), std::get<1>(args), std::get<2>(args), std::get<3>(args), std::get<4>(args));
}

uint8_t* pointer(uintptr_t address) { return reinterpret_cast<uint8_t*>(address); }

ObservationSpec observation_of(const py::tuple& field) {
  ObservationSpec spec;
  spec.name = field[0].cast<std::string>();
  spec.dtype = static_cast<Dtype>(field[1].cast<int32_t>());
  spec.shape = field[2].cast<std::vector<int64_t>>();
  spec.low = field[3].cast<std::vector<double>>();
  spec.high = field[4].cast<std::vector<double>>();
  return spec;
}

}  // namespace

PYBIND11_MODULE(_process, m) {
  if (export_families(m.ptr(), {family<ProcessEnv>("Process")}) < 0) throw py::error_already_set();

  m.def("layout", [](const LayoutArgs& args) {
    const RegionLayout layout = layout_of(args);
    py::dict offsets;
    offsets["workers"] = layout.workers;
    offsets["envs"] = layout.envs;
    offsets["actions"] = layout.actions;
    offsets["rewards"] = layout.rewards;
    offsets["terminated"] = layout.terminated;
    offsets["truncated"] = layout.truncated;
    offsets["columns"] = layout.columns;
    offsets["errors"] = layout.errors;
    offsets["total"] = layout.total;
    return offsets;
  });

  // The parent: writes the region's control blocks (the memfd is zeroed), the workers' env ranges.
  m.def("init_region",
        [](uintptr_t address, const LayoutArgs& args, const std::vector<std::pair<size_t, size_t>>& ranges) {
          const RegionLayout layout = layout_of(args);
          uint8_t* base = pointer(address);
          new (base) RegionHeader();
          for (size_t w = 0; w < layout.num_workers; ++w) {
            auto* worker = new (base + layout.workers + w * sizeof(WorkerControl)) WorkerControl();
            worker->first_env = static_cast<uint32_t>(ranges.at(w).first);
            worker->env_count = static_cast<uint32_t>(ranges.at(w).second);
          }
          for (size_t i = 0; i < layout.num_envs; ++i) new (base + layout.envs + i * sizeof(EnvControl)) EnvControl();
        });

  // The supervisor: which process serves worker w now; that its last one died, and how.
  m.def("set_worker_pid", [](uintptr_t address, const LayoutArgs& args, size_t w, int32_t pid) {
    Region(pointer(address), layout_of(args)).worker(w).pid.store(pid, std::memory_order_release);
  });
  m.def("mark_worker_dead", [](uintptr_t address, const LayoutArgs& args, size_t w, int32_t status) {
    WorkerControl& worker = Region(pointer(address), layout_of(args)).worker(w);
    worker.exit_status.store(status, std::memory_order_release);
    // No process serves the worker until its replacement starts (set_worker_pid): an env that sends a request
    // meanwhile must not take the reaped pid for the one that will answer (process_env.h, check_worker_alive).
    worker.pid.store(0, std::memory_order_release);
    worker.generation.fetch_add(1, std::memory_order_acq_rel);
  });
  m.def("shut_down", [](uintptr_t address, const LayoutArgs& args) {
    const Region region(pointer(address), layout_of(args));
    region.header().shutdown.store(1, std::memory_order_seq_cst);
    for (size_t w = 0; w < region.layout().num_workers; ++w) {
      region.worker(w).doorbell.fetch_add(1, std::memory_order_seq_cst);
      futex_wake(region.worker(w).doorbell);
    }
  });

  // The parent: the spec and mapping a pool of family "Process" is made from
  // (its Config's "region" is the key returned).
  m.def("register_region", [](uintptr_t address, const LayoutArgs& args, const std::vector<py::tuple>& observations,
                              const py::tuple& action, const std::vector<py::tuple>& extras, int64_t max_episode_steps,
                              double step_cost_ns, int32_t spin_polls) {
    auto info = std::make_shared<RegionInfo>();
    info->base = pointer(address);
    info->layout = layout_of(args);
    for (const py::tuple& field : observations) info->spec.observations.push_back(observation_of(field));
    info->spec.action.discrete = action[0].cast<bool>();
    info->spec.action.num_actions = action[1].cast<int64_t>();
    info->spec.action.shape = action[2].cast<std::vector<int64_t>>();
    info->spec.action.low = action[3].cast<std::vector<double>>();
    info->spec.action.high = action[4].cast<std::vector<double>>();
    for (const py::tuple& extra : extras)
      info->spec.extras.push_back({extra[0].cast<std::string>(), static_cast<Dtype>(extra[1].cast<int32_t>()),
                                   extra[2].cast<std::vector<int64_t>>()});
    info->spec.max_episode_steps = max_episode_steps;
    info->spec.step_cost_ns = step_cost_ns;
    info->spin_polls = spin_polls;
    return RegionRegistry::instance().add(std::move(info));
  });

  m.def(
      "forget_region", [](int64_t key) { return RegionRegistry::instance().forget(key); },
      "a pool whose making failed forgets the region it registered (false: the Model had taken it)");
  m.def("registered_regions", [] { return RegionRegistry::instance().size(); }, "regions no pool has taken (tests)");

  py::class_<WorkerChannel>(m, "WorkerChannel")
      .def(py::init([](uintptr_t address, const LayoutArgs& args, size_t worker, int32_t spin_polls) {
        return std::make_unique<WorkerChannel>(pointer(address), layout_of(args), worker, spin_polls);
      }))
      .def_property_readonly("first_env", &WorkerChannel::first_env)
      .def_property_readonly("env_count", &WorkerChannel::env_count)
      .def(
          "take",
          [](WorkerChannel& channel, uintptr_t out) {
            py::gil_scoped_release release;
            return channel.take(reinterpret_cast<int64_t*>(out));
          },
          "Waits for requests; fills (env, op, seed, action index) rows at `out`, returns their count (-1: exit).")
      .def("finish", &WorkerChannel::finish)
      .def("fail", &WorkerChannel::fail);

  m.attr("OP_RESET") = kOpReset;
  m.attr("OP_STEP") = kOpStep;
}
