// python/capture_entry.h — callsite.capture(), the Python entry point: the source and filter
// dispatch in front of the walk.
#pragma once
#include <Python.h>

namespace callsite::detail {

/// callsite.capture(skip=0, limit=None, *, filter=None, source="walk") — METH_FASTCALL|KEYWORDS.
PyObject *capture_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames);

}  // namespace callsite::detail
