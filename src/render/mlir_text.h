// render/mlir_text.h — MLIR's printed location syntax for frames and tracebacks (issue 4).
#pragma once
#include <Python.h>

namespace callsite::detail {

/// `Traceback.to_mlir(filter=None)` and `Frame.to_mlir()`: the text MLIR prints for the
/// location `loc_tracebacks()` would build. New reference (str) or nullptr with an error.
PyObject *traceback_to_mlir(PyObject *traceback, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames) noexcept;
PyObject *frame_to_mlir(PyObject *frame) noexcept;

}  // namespace callsite::detail
