// render/stack_summary.h — Traceback → traceback.StackSummary / formatted lines / dicts.
#pragma once
#include <Python.h>

namespace callsite::detail {

/// A traceback.StackSummary, outermost first, of FrameSummary objects whose fields equal
/// what traceback.extract_stack reports, columns from co_positions(); lines looked up lazily.
PyObject *traceback_as_stack_summary(PyObject *traceback) noexcept;

/// `traceback.format_list`-style lines (outermost first).
PyObject *traceback_format(PyObject *traceback) noexcept;

/// A list of per-frame dicts, innermost first (JSON-ready: str/int/None values only).
PyObject *traceback_to_list(PyObject *traceback) noexcept;

/// The dict of one callsite.Frame.
PyObject *frame_to_dict(PyObject *frame) noexcept;

}  // namespace callsite::detail
