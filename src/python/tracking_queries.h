// python/tracking_queries.h — callsite.tracking's query functions and its CallSite type.
#pragma once
#include <Python.h>

namespace callsite::tracking::detail {

/// callsite.tracking.window(skip=0, limit=None, *, filter=None) -> list[CallSite]:
/// METH_FASTCALL|METH_KEYWORDS, registered raw (it is a query path).
PyObject *window_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames);

/// callsite.tracking.last(filter=None) -> Frame | None: the most recent call site (the first
/// kept by `filter`) as a callsite.Frame. METH_FASTCALL, positional: the cheapest query.
PyObject *last_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames);

/// The callsite.tracking.CallSite type (a struct sequence), created by init_call_site_type().
extern PyTypeObject *call_site_type;
bool init_call_site_type() noexcept;

}  // namespace callsite::tracking::detail
