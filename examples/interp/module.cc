// examples/interp/module.cc — the calc interpreter as an extension module built against
// find_package(callsite): `import calc; calc.Program(source, file, host)`. The callsite package
// builds the same file as its private `callsite._calc` (CALC_MODULE=_calc,
// CALC_QUALIFIED=callsite._calc) for `python -m callsite demo` and the tests.
#include <Python.h>

#include "interp.h"

#ifndef CALC_MODULE
#define CALC_MODULE calc
#endif
#ifndef CALC_QUALIFIED
#define CALC_QUALIFIED CALC_MODULE
#endif
#define CALC_STR_(x) #x
#define CALC_STR(x) CALC_STR_(x)
#define CALC_CAT_(a, b) a##b
#define CALC_CAT(a, b) CALC_CAT_(a, b)

namespace {
// The short name: single-phase init qualifies it with the importing package (import.c's
// _Py_PackageContext), so a tp_name must spell the full import path itself.
PyModuleDef module = {PyModuleDef_HEAD_INIT, CALC_STR(CALC_MODULE),
                      "calc: a tiny interpreted language whose frames show up in callsite.", -1,
                      nullptr};
}  // namespace

PyMODINIT_FUNC CALC_CAT(PyInit_, CALC_MODULE)() {
  if (!callsite::api::import()) return nullptr;  // share _callsite's shadow stack
  PyObject *m = PyModule_Create(&module);
  PyTypeObject *program = m ? calc::make_program_type(CALC_STR(CALC_QUALIFIED) ".Program") : nullptr;
  if (!program || PyModule_AddObject(m, "Program", reinterpret_cast<PyObject *>(program)) < 0) {
    Py_XDECREF(program);
    Py_XDECREF(m);
    return nullptr;
  }
  return m;
}
