// tracking/state.h — what the bindings read and call beyond the public API (callsite/tracking.h).
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/tracking.h"

namespace callsite::tracking::detail {

/// A snapshot for callsite.tracking.status().
struct Status {
  Mode mode;
  std::size_t window;
  PyObject *filter;  ///< borrowed, nullptr when none
  int tool_id;       ///< -1 outside monitoring mode
  std::size_t threads;  ///< live windows
  std::uint64_t callbacks, recorded, disabled, filter_errors;
  bool this_thread_covered;  ///< the calling thread has a window that is being updated
};
Status status() noexcept;

/// Creates the types tracking needs; once, at module init. False with a Python error.
bool init() noexcept;

/// "off", "profile", "monitoring".
const char *mode_name(Mode mode) noexcept;

/// callsite.tracking.window(skip=0, limit=None, *, filter=None) -> list[CallSite]:
/// METH_FASTCALL|METH_KEYWORDS, registered raw (it is a query path).
PyObject *window_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) noexcept;

/// callsite.tracking.last(filter=None) -> Frame | None: the most recent call site (the first
/// kept by `filter`) as a callsite.Frame. METH_FASTCALL, positional: the seed's query, cheapest.
PyObject *last_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs) noexcept;

/// The callsite.tracking.CallSite type (a struct sequence).
extern PyTypeObject *call_site_type;

}  // namespace callsite::tracking::detail
