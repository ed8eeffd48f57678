// capture/capture.h — the Python entry point of capture().
#pragma once
#include <Python.h>

namespace callsite::detail {

/// callsite.capture(skip=0, limit=None, *, filter=None, source="walk") — METH_FASTCALL|KEYWORDS.
PyObject *capture_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames) noexcept;

/// Parses a non-negative count argument: None → `none_value`; bool is rejected like any
/// non-int. False with TypeError/ValueError naming `what`.
bool parse_count(PyObject *value, const char *what, size_t none_value, size_t *out) noexcept;

}  // namespace callsite::detail
