// testing/code_positions.cc — exposes decoded positions so tests can compare them with CPython's.
#include "testing/code_positions.h"

#include "symbolize/code_info.h"

namespace callsite::detail {
namespace {

PyObject *int_or_none(int v) {
  if (v < 0) Py_RETURN_NONE;
  return PyLong_FromLong(v);
}

}  // namespace

PyObject *debug_code_positions(PyObject *code) noexcept {
  if (!PyCode_Check(code)) {
    PyErr_Format(PyExc_TypeError, "expected a code object, got %.200s", Py_TYPE(code)->tp_name);
    return nullptr;
  }
  // co_code's length counts every code unit (inline caches included on 3.11+).
  PyObject *co_code = PyObject_GetAttrString(code, "co_code");
  if (!co_code) return nullptr;
  const Py_ssize_t units = PyBytes_GET_SIZE(co_code) / 2;
  Py_DECREF(co_code);
  PyObject *list = PyList_New(units);
  if (!list) return nullptr;
  for (Py_ssize_t i = 0; i < units; ++i) {
    Position p;
    if (!code_position(reinterpret_cast<PyCodeObject *>(code), int(i * 2), &p)) {
      Py_DECREF(list);
      return nullptr;
    }
    PyObject *t = Py_BuildValue("(NNNN)", int_or_none(p.lineno), int_or_none(p.end_lineno),
                                int_or_none(p.colno), int_or_none(p.end_colno));
    if (!t) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, t);
  }
  return list;
}

}  // namespace callsite::detail
