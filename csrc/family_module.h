// family_module.h — what a family's Python extension module exports, with the
// plain CPython API: its plug-in table (core/plugin.h, plugin_abi.h) in a
// capsule, its family names, the task kwargs each declares, and the plug-in
// ABI version it was built for.
//
//   TORCHPOOL_FAMILY_MODULE(_classic, torchpool::family<CartPole>("CartPole"), ...)
//
// A module that defines more (torchpool._process, with pybind11) calls
// export_families(module, {...}) from its own init function.
#pragma once

#include <Python.h>

#include <exception>
#include <vector>

#include "core/plugin.h"  // installed as <torchpool/core/plugin.h> beside this file

namespace torchpool {

// Adds family_plugin, families, kwargs ({family: [(name, type, default, doc)]}) and abi to
// `module`. 0 on success; -1 with a Python error set.
inline int export_families(PyObject* module, std::vector<FamilyEntry> entries) noexcept {
  try {
    const TorchpoolPlugin* table = plugin_table(std::move(entries));
    PyObject* names = PyList_New(0);
    PyObject* kwargs = PyDict_New();
    if (names == nullptr || kwargs == nullptr) return Py_XDECREF(names), Py_XDECREF(kwargs), -1;
    for (uint64_t f = 0; f < table->family_count; ++f) {
      const TorchpoolFamily& family = table->families[f];
      PyObject* declared = PyList_New(0);
      PyObject* name = PyUnicode_FromString(family.name);
      bool ok = declared != nullptr && name != nullptr && PyList_Append(names, name) == 0;
      for (uint64_t k = 0; ok && k < family.kwarg_count; ++k) {
        const TorchpoolKwargDeclaration& kwarg = family.kwargs[k];
        PyObject* item = Py_BuildValue("(ssss)", kwarg.name, kwarg.type, kwarg.default_value, kwarg.doc);
        ok = item != nullptr && PyList_Append(declared, item) == 0;
        Py_XDECREF(item);
      }
      ok = ok && PyDict_SetItem(kwargs, name, declared) == 0;
      Py_XDECREF(declared);
      Py_XDECREF(name);
      if (!ok) return Py_DECREF(names), Py_DECREF(kwargs), -1;
    }
    // PyModule_AddObjectRef (3.10+) leaves the reference with us either way.
    PyObject* capsule = PyCapsule_New(const_cast<TorchpoolPlugin*>(table), TORCHPOOL_PLUGIN_CAPSULE, nullptr);
    PyObject* abi = PyLong_FromUnsignedLong(TORCHPOOL_PLUGIN_ABI_VERSION);
    const bool ok =
        capsule != nullptr && abi != nullptr && PyModule_AddObjectRef(module, "family_plugin", capsule) == 0 &&
        PyModule_AddObjectRef(module, "families", names) == 0 && PyModule_AddObjectRef(module, "kwargs", kwargs) == 0 &&
        PyModule_AddObjectRef(module, "abi", abi) == 0;
    Py_XDECREF(capsule), Py_XDECREF(abi), Py_DECREF(names), Py_DECREF(kwargs);
    return ok ? 0 : -1;
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
    return -1;
  }
}

}  // namespace torchpool

// A module that only exports families: TORCHPOOL_FAMILY_MODULE(_classic, family<CartPole>("CartPole"), ...).
#define TORCHPOOL_FAMILY_MODULE(module_name, ...)                                                            \
  static PyModuleDef module_name##_definition = {PyModuleDef_HEAD_INIT, #module_name, nullptr, -1, nullptr}; \
  extern "C" __attribute__((visibility("default"))) PyObject* PyInit_##module_name() {                       \
    PyObject* module = PyModule_Create(&module_name##_definition);                                           \
    if (module == nullptr) return nullptr;                                                                   \
    try {                                                                                                    \
      if (torchpool::export_families(module, {__VA_ARGS__}) == 0) return module;                             \
    } catch (const std::exception& error) {                                                                  \
      PyErr_SetString(PyExc_RuntimeError, error.what());                                                     \
    }                                                                                                        \
    Py_DECREF(module);                                                                                       \
    return nullptr;                                                                                          \
  }
