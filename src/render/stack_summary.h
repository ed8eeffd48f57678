// render/stack_summary.h — frames as traceback.StackSummary and as formatted lines.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/frame.h"

namespace callsite::detail {

/// A traceback.StackSummary of `frames[0..n)` (innermost first), outermost first, of
/// FrameSummary objects whose fields equal what traceback.extract_stack reports, columns from
/// co_positions(); lines looked up lazily. New reference or nullptr with an error.
PyObject *stack_summary(const RawFrame *frames, std::size_t n);

/// `traceback.format_list`-style lines (outermost first).
PyObject *format_stack(const RawFrame *frames, std::size_t n);

}  // namespace callsite::detail
