// module.cpp — torchpool._minigrid, the MiniGrid family module, with the mission vocabulary beside it.
#include "envs/minigrid/minigrid_env.h"
#include "family_module.h"

static PyModuleDef minigrid_definition = {PyModuleDef_HEAD_INIT, "_minigrid", nullptr, -1, nullptr};

extern "C" __attribute__((visibility("default"))) PyObject* PyInit__minigrid() {
  PyObject* module = PyModule_Create(&minigrid_definition);
  if (module == nullptr) return nullptr;
  try {
    if (torchpool::export_families(module, {torchpool::family<torchpool::minigrid::MiniGrid>("MiniGrid")}) == 0) {
      const std::vector<std::string>& words = torchpool::minigrid::vocabulary();
      PyObject* vocabulary = PyTuple_New(static_cast<Py_ssize_t>(words.size()));
      bool ok = vocabulary != nullptr;
      for (size_t i = 0; ok && i < words.size(); ++i) {
        PyObject* word = PyUnicode_FromString(words[i].c_str());
        ok = word != nullptr;
        if (ok) PyTuple_SET_ITEM(vocabulary, static_cast<Py_ssize_t>(i), word);
      }
      ok = ok && PyModule_AddObjectRef(module, "vocabulary", vocabulary) == 0;
      Py_XDECREF(vocabulary);
      if (ok) return module;
    }
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  Py_DECREF(module);
  return nullptr;
}
