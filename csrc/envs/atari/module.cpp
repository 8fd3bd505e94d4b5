// module.cpp — torchpool._atari, every game ALE plays, with ALE compiled in.
// Also answers which ROMs ALE supports (by MD5), which the registry asks
// when it first lists the Atari ids.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "envs/atari/atari.h"
#include "family_module.h"

namespace py = pybind11;

PYBIND11_MODULE(_atari, m) {
  using namespace torchpool;
  if (export_families(m.ptr(), {family<atari::Atari>("Atari")}) < 0) throw py::error_already_set();
  m.def("rom_supported", &atari::rom_supported, "whether ALE can run this ROM file (by its MD5)");
  m.def("emulation_rate", &atari::emulation_rate, py::call_guard<py::gil_scoped_release>(),
        "frames/s of bare ALE emulation in one thread (the benchmarks' raw limit)");
}
