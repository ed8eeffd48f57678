// capture/raw_frame_refs.h — the reference a stored RawFrame holds: its code object (Python
// frames) or its executable (native frames, through the native subsystem).
#pragma once
#include <Python.h>

#include "locus/frame.h"
#include "native/hooks.h"

namespace locus::detail {

inline void retain(const RawFrame &f) noexcept {
  if (f.is_python())
    Py_INCREF(static_cast<PyObject *>(f.code()));
  else
    native::retain(f.executable());
}

inline void release(const RawFrame &f) noexcept {
  if (f.is_python())
    Py_DECREF(static_cast<PyObject *>(f.code()));
  else
    native::release(f.executable());
}

}  // namespace locus::detail
