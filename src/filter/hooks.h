// filter/hooks.h — what capture() and the tracked windows need from the filter subsystem.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/frame.h"

namespace callsite::filter {

/// Keeps the frames of `frames[0..n)` that `filter` (a callsite.Filter) keeps, in order, at most
/// `limit` of them (the filter's own limit applies too), into a new Traceback. Raises
/// TypeError when `filter` is not a Filter. New reference or nullptr with an error set.
PyObject *filtered_traceback(PyObject *filter, const RawFrame *frames, std::size_t n,
                             std::size_t limit) noexcept;

/// Whether `filter` keeps frames of `code`: 1 keep, 0 drop, -1 error (TypeError when `filter`
/// is not a callsite.Filter). Decisions are cached per code object. GIL held.
int keeps(PyObject *filter, PyCodeObject *code) noexcept;

/// The filter's frame limit (counts kept frames); SIZE_MAX on error (with TypeError set).
std::size_t filter_limit(PyObject *filter) noexcept;

}  // namespace callsite::filter
