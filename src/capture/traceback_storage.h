// capture/traceback_storage.h — the storage of a callsite.Traceback: raw frames inline in one
// variable-size object (its Python methods are in src/python/traceback_type.cc), and the
// accessors other subsystems use: size, frames, creation.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/frame.h"
#include "capture/walk_end.h"

namespace callsite::detail {

/// One allocation per capture: the header below and `size` RawFrames after it, as JAX's
/// Traceback does. Not GC-tracked: it references only code objects and executables.
struct TracebackObject {
  PyObject_VAR_HEAD
  Py_hash_t hash;        ///< -1 until first computed
  std::uint32_t capacity; ///< entries the storage has room for (>= ob_size; traceback_pool)
  bool may_have_native;   ///< false: every entry is a code object (dealloc skips the kind test)
  WalkEnd end;            ///< at_boundary: the last entry is a kernel boundary's frame
  RawFrame frames[1];    ///< ob_size entries (the storage is var-size)
};

/// The callsite.Traceback type; created by the Python-facing layer at init.
extern PyTypeObject *traceback_type;

/// Marks `tb` (a Traceback) as ending at a kernel boundary's frame, which filters keep.
inline void set_end(PyObject *tb, WalkEnd end) noexcept {
  reinterpret_cast<TracebackObject *>(tb)->end = end;
}

/// Marks `tb` as holding native entries and takes a reference to each one's executable (the
/// walker takes only the code-object references).
void retain_native_entries(TracebackObject *tb) noexcept;

}  // namespace callsite::detail

namespace callsite {

/// True if `obj` is a callsite.Traceback.
bool is_traceback(PyObject *obj) noexcept;

/// Number of frames and a pointer to them (innermost first); `tb` must be a Traceback.
std::size_t traceback_size(PyObject *tb) noexcept;
const RawFrame *traceback_frames(PyObject *tb) noexcept;
/// Whether `tb`'s last entry is a kernel boundary's frame (filters keep it); `tb` must be a
/// Traceback.
WalkEnd traceback_end(PyObject *tb) noexcept;

/// A new Traceback holding copies of `frames` (taking references to their code objects and
/// executables). Returns a new reference, or nullptr with a Python error set.
PyObject *new_traceback(const RawFrame *frames, std::size_t n) noexcept;

}  // namespace callsite
