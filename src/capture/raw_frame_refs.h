// capture/raw_frame_refs.h — the reference a stored RawFrame holds: its code object (Python
// frames) or its executable (native frames, through the native subsystem).
#pragma once
#include <Python.h>

#include "layouts/refcount_runs.h"
#include "callsite/frame.h"
#include "native/hooks.h"

namespace callsite::detail {

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

// Drops the code references of the Python entries of frames[0..n), one refcount write per run
// of equal code objects (see layouts/refcount_runs.h); native entries are left alone.
inline void release_code_refs(const RawFrame *frames, std::size_t n) noexcept {
  callsite_adjust_code_refs(reinterpret_cast<const callsite_raw_frame *>(frames), n, -1);
}

}  // namespace callsite::detail
