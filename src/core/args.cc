// core/args.cc — argument binding and count parsing for the raw METH_FASTCALL entry points.
#include "core/args.h"

namespace callsite::detail {

bool bind_fastcall_args(const char *function, const char *const *names, Py_ssize_t n_names,
                        Py_ssize_t n_positional, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, PyObject **slots) noexcept {
  if (nargs > n_positional) {
    PyErr_Format(PyExc_TypeError, "%s() takes at most %zd positional argument%s (%zd given)",
                 function, n_positional, n_positional == 1 ? "" : "s", nargs);
    return false;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[i] = args[i];
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    Py_ssize_t slot = -1;
    for (Py_ssize_t j = 0; j < n_names && slot < 0; ++j)
      if (PyUnicode_CompareWithASCIIString(key, names[j]) == 0) slot = j;
    if (slot < 0) {
      PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", function,
                   key);
      return false;
    }
    if (slots[slot]) {
      PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", function,
                   names[slot]);
      return false;
    }
    slots[slot] = args[nargs + k];
  }
  return true;
}

bool parse_count(PyObject *value, const char *what, std::size_t none_value,
                 std::size_t *out) noexcept {
  if (value == Py_None) {
    *out = none_value;
    return true;
  }
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int or None, not %.200s", what,
                 Py_TYPE(value)->tp_name);
    return false;
  }
  const Py_ssize_t v = PyLong_AsSsize_t(value);
  if (v == -1 && PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_OverflowError)) return false;
    PyErr_Clear();
    PyObject *zero = PyLong_FromLong(0);
    const int negative = zero ? PyObject_RichCompareBool(value, zero, Py_LT) : -1;
    Py_XDECREF(zero);
    if (negative < 0) return false;
    if (negative) {
      PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %R", what, value);
      return false;
    }
    // More than any stack holds: skip every frame, or keep every one.
    *out = none_value == SIZE_MAX ? SIZE_MAX : std::size_t(PY_SSIZE_T_MAX);
    return true;
  }
  if (v < 0) {
    PyErr_Format(PyExc_ValueError, "%s must be >= 0, got %zd", what, v);
    return false;
  }
  *out = std::size_t(v);
  return true;
}

}  // namespace callsite::detail
