// capture/frame_sources.h — Tracebacks from things that are not the live stack.
#pragma once
#include <Python.h>

namespace callsite::detail {

/// `frame` and its callers through f_back (public API: the frame objects already exist).
PyObject *traceback_from_frame(PyObject *frame) noexcept;

/// An exception traceback (tb_next chain, outermost first) as a Traceback, innermost first,
/// with each entry's tb_lasti — the instruction that was running when the exception passed.
PyObject *traceback_from_exception_tb(PyObject *tb) noexcept;

}  // namespace callsite::detail
