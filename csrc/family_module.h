// family_module.h — what a family's Python extension module exports: its
// FamilyPlugin (csrc/core/plugin.h) in a capsule, and its family names.
//
//   PYBIND11_MODULE(_classic, m) {
//     torchpool::export_families(m, {torchpool::family<CartPole>("CartPole"), ...});
//   }
#pragma once

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <string>
#include <vector>

#include "core/plugin.h"  // installed as <torchpool/core/plugin.h> beside this file

namespace torchpool {

inline void export_families(pybind11::module_& m, std::vector<FamilyEntry> families) {
  // Lives as long as the process: the module is never unloaded, and pools hold executors made through it.
  auto* plugin = new FamilyPlugin{AbiStamp{}, std::move(families)};
  std::vector<std::string> names;
  pybind11::dict kwargs;  // family -> [(name, type, default, doc)], what the registry needs of a user's family
  for (const FamilyEntry& entry : plugin->families) {
    names.push_back(entry.name);
    pybind11::list declared;
    for (const TaskKwarg& kwarg : entry.kwargs)
      declared.append(pybind11::make_tuple(kwarg.name, kwarg.type, kwarg.default_value, kwarg.doc));
    kwargs[entry.name] = declared;
  }
  m.attr("family_plugin") = pybind11::capsule(plugin, kPluginCapsule);
  m.attr("families") = names;
  m.attr("kwargs") = kwargs;
}

}  // namespace torchpool
