// python/frame_type.h — callsite.Frame: one symbolized frame as a Python object.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/frame.h"

namespace callsite::detail {

extern PyTypeObject *frame_type;

PyTypeObject *init_frame_type() noexcept;

/// Symbolizes `raw` into a new callsite.Frame (new reference, or nullptr with an error set).
/// `activation`, for a native entry of a capture: how many of the capture's entries of the
/// same executable and state are inner to it (which live frame its `locals` reads).
PyObject *new_frame(const RawFrame &raw, std::size_t activation = 0);

/// The raw frame a callsite.Frame was made from; `obj` must be a Frame.
const RawFrame &frame_raw(PyObject *obj) noexcept;

/// Frame.to_dict(): the JSON-ready fields of a callsite.Frame (str/int/None values).
PyObject *frame_to_dict(PyObject *frame) noexcept;

}  // namespace callsite::detail
