// tracking/hooks.h — what capture() needs from the tracked call windows (issue 5).
#pragma once
#include <Python.h>

#include <cstddef>

namespace callsite::tracking {

/// capture(source="window"): the calling thread's window of recent call sites as a
/// Traceback, most recent first, after `skip`, at most `limit` entries, through `filter`
/// (nullptr or None: unfiltered). Raises RuntimeError when tracking is disabled.
PyObject *window_traceback(std::size_t skip, std::size_t limit, PyObject *filter) noexcept;

}  // namespace callsite::tracking
