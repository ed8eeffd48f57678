// capture/traceback.h — callsite.Traceback as other subsystems use it: size, frames, creation.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/frame.h"

namespace callsite {

/// True if `obj` is a callsite.Traceback.
bool is_traceback(PyObject *obj) noexcept;

/// Number of frames and a pointer to them (innermost first); `tb` must be a Traceback.
std::size_t traceback_size(PyObject *tb) noexcept;
const RawFrame *traceback_frames(PyObject *tb) noexcept;

/// A new Traceback holding copies of `frames` (taking references to their code objects and
/// executables). Returns a new reference, or nullptr with a Python error set.
PyObject *make_traceback(const RawFrame *frames, std::size_t n) noexcept;

}  // namespace callsite
