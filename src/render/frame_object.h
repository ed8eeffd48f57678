// render/frame_object.h — locus.Frame: one symbolized frame as a Python object.
#pragma once
#include <Python.h>

#include "locus/frame.h"

namespace locus::detail {

extern PyTypeObject *frame_type;

PyTypeObject *init_frame_type() noexcept;

/// Symbolizes `raw` into a new locus.Frame (new reference, or nullptr with an error set).
PyObject *new_frame(const RawFrame &raw) noexcept;

/// The raw frame a locus.Frame was made from; `obj` must be a Frame.
const RawFrame &frame_raw(PyObject *obj) noexcept;

}  // namespace locus::detail
