// filter/hooks.h — what capture() needs from the filter subsystem (issue 4).
#pragma once
#include <Python.h>

#include <cstddef>

#include "locus/frame.h"

namespace locus::filter {

/// Keeps the frames of `frames[0..n)` that `filter` (a locus.Filter) keeps, in order, at most
/// `limit` of them (the filter's own limit applies too), into a new Traceback. Raises
/// TypeError when `filter` is not a Filter. New reference or nullptr with an error set.
PyObject *filtered_traceback(PyObject *filter, const RawFrame *frames, std::size_t n,
                             std::size_t limit) noexcept;

}  // namespace locus::filter
