// tracking/state.h — what the bindings read and call beyond the public API (locus/tracking.h).
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "locus/tracking.h"

namespace locus::tracking::detail {

/// A snapshot for locus.tracking.status().
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

/// locus.tracking.window(skip=0, limit=None, *, filter=None) -> list[CallSite]:
/// METH_FASTCALL|METH_KEYWORDS, registered raw (it is a query path).
PyObject *window_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) noexcept;

/// locus.tracking.last(filter=None) -> Frame | None: the most recent call site (the first
/// kept by `filter`) as a locus.Frame. METH_FASTCALL, positional: the seed's query, cheapest.
PyObject *last_py(PyObject *module, PyObject *const *args, Py_ssize_t nargs) noexcept;

/// The locus.tracking.CallSite type (a struct sequence).
extern PyTypeObject *call_site_type;

}  // namespace locus::tracking::detail
