// core/frame_refs.h — RawFrames made by name, and the reference a stored RawFrame holds: its
// code object (Python frames) or its executable's owner (native frames made at run time).
#pragma once
#include <Python.h>

#include <cstdint>

#include "callsite/native_frame.h"
#include "layouts/refcount_runs.h"

namespace callsite::detail {

/// The entry of a Python frame: `code` at instruction offset `lasti_bytes` (as f_lasti).
inline RawFrame python_raw_frame(PyCodeObject *code, int lasti_bytes) noexcept {
  return RawFrame{reinterpret_cast<std::uintptr_t>(code), std::intptr_t(lasti_bytes)};
}

/// The entry of a native frame: `executable` at `state` (the low tag bit marks it native).
inline RawFrame native_raw_frame(const Executable *executable, std::uintptr_t state) noexcept {
  return RawFrame{reinterpret_cast<std::uintptr_t>(executable) | 1u, std::intptr_t(state)};
}

/// Executables made at run time are owned by a Python object (Executable::owner) that
/// Tracebacks and frames holding their entries keep alive; static ones have no owner.
inline void retain(const Executable *executable) noexcept { Py_XINCREF(executable->owner); }
inline void release(const Executable *executable) { Py_XDECREF(executable->owner); }

inline void retain(const RawFrame &f) noexcept {
  if (f.is_python())
    Py_INCREF(static_cast<PyObject *>(f.code()));
  else
    retain(f.executable());
}

inline void release(const RawFrame &f) {
  if (f.is_python())
    Py_DECREF(static_cast<PyObject *>(f.code()));
  else
    release(f.executable());
}

// Drops the code references of the Python entries of frames[0..n), one refcount write per run
// of equal code objects (see layouts/refcount_runs.h); native entries are left alone.
inline void release_code_refs(const RawFrame *frames, std::size_t n) noexcept {
  callsite_adjust_code_refs(reinterpret_cast<const callsite_raw_frame *>(frames), n, -1);
}

}  // namespace callsite::detail
