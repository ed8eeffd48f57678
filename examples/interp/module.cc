// examples/interp/module.cc — the calc interpreter as a standalone extension module built
// against find_package(callsite): `import callsite_calc; callsite_calc.Program(source, file, host)`.
#include <Python.h>

#include "interp.h"

namespace {
PyModuleDef module = {PyModuleDef_HEAD_INIT, "callsite_calc",
                      "calc: a tiny interpreted language whose frames show up in callsite.", -1,
                      nullptr};
}  // namespace

PyMODINIT_FUNC PyInit_callsite_calc() {
  if (!callsite::api::import()) return nullptr;  // share _callsite's shadow stack
  PyObject *m = PyModule_Create(&module);
  PyTypeObject *program = m ? calc::make_program_type("callsite_calc.Program") : nullptr;
  if (!program || PyModule_AddObject(m, "Program", reinterpret_cast<PyObject *>(program)) < 0) {
    Py_XDECREF(program);
    Py_XDECREF(m);
    return nullptr;
  }
  return m;
}
