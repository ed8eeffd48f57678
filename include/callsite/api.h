// callsite/api.h — header-only access to the _callsite module from OTHER extension modules.
//
// The shadow stack of native frames must be the one _callsite walks, so another extension
// cannot link its own copy: it fetches _callsite's function table from the capsule
// `callsite._callsite._C_API` (as NumPy's import_array() does) and calls through it.
//
//   PyMODINIT_FUNC PyInit_myjit() {
//     if (!callsite::api::import()) return nullptr;   // ImportError/RuntimeError set
//     ...
//   }
//   static const callsite::Executable kKernel{"matmul", "jit", &reify_matmul};
//   PyObject *run(...) {
//     callsite::NativeFrame frame(kKernel, /*state=*/0);
//     frame.set_state(pc);                               // cheap, as often as needed
//     if (!call_back_into_python()) return frame.add_traceback();
//   }
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/native_frame.h"

namespace callsite::api {

inline constexpr const char *kCapsuleName = "callsite._callsite._C_API";

/// Whether `table` can serve a consumer built against this header that calls entries up to
/// byte `needed` of NativeAPI: the same CALLSITE_ABI_MAJOR, and at least `needed` bytes (a
/// newer provider's table is larger). False with RuntimeError naming both sides otherwise.
inline bool accepts(const NativeAPI *table, std::size_t needed = sizeof(NativeAPI)) noexcept {
  if (table->version == CALLSITE_ABI_MAJOR && table->size >= needed) return true;
  PyErr_Format(PyExc_RuntimeError,
               "callsite C API mismatch: this module needs ABI major %d with a table of at "
               "least %zu bytes, the installed callsite provides major %u with %u bytes",
               CALLSITE_ABI_MAJOR, needed, table->version, table->size);
  return false;
}

/// Imports callsite._callsite and installs its function table for this extension module. Call
/// once (e.g. in PyInit_); repeat calls are cheap. `needed`: the table size this module relies
/// on. The default, this header's whole table, is right for a module that may call every
/// entry; one that calls none after entry `e` passes `offsetof(NativeAPI, e) + sizeof(void *)`
/// and tests later entries with has_entry(). False with a Python error on failure.
inline bool import(std::size_t needed = sizeof(NativeAPI)) noexcept {
  if (detail::native_api) return true;
  auto *table = static_cast<const NativeAPI *>(PyCapsule_Import(kCapsuleName, 0));
  if (!table || !accepts(table, needed)) return false;
  detail::native_api = table;
  return true;
}

/// Whether the installed table has the entry at byte `offset` (`offsetof(NativeAPI, entry)`):
/// how a module imported with a smaller `needed` tests for an entry newer than that.
inline bool has_entry(std::size_t offset) noexcept {
  return detail::native_api && detail::native_api->size >= offset + sizeof(void (*)());
}

/// True once import() has succeeded (or inside _callsite itself).
inline bool available() noexcept { return detail::native_api != nullptr; }

/// The calling thread's stack as a new callsite.Traceback, innermost first. GIL held.
inline PyObject *capture(std::size_t skip = 0, std::size_t limit = SIZE_MAX) noexcept {
  return detail::native_api->capture(skip, limit);
}

/// Borrowed raw entries (valid while the frames run); returns how many the stack had.
inline std::size_t capture_raw(RawFrame *out, std::size_t capacity,
                               std::size_t skip = 0) noexcept {
  return detail::native_api->capture_raw(out, capacity, skip);
}

/// Symbolizes one raw entry (Python or native). False with a Python error. GIL held.
inline bool symbolize(const RawFrame &frame, FrameInfo *out) {
  return detail::native_api->symbolize(&frame, out) == 0;
}

/// This thread's innermost native frame, or nullptr. GIL held.
inline const NativeLink *innermost() noexcept { return detail::native_api->innermost(); }

/// Prepends an entry for (executable, state) to the traceback of the exception being raised.
/// 0, or -1 when no exception is being raised (nothing is added). GIL held.
inline int add_traceback(const Executable &executable, std::uintptr_t state) {
  return detail::native_api->add_traceback(&executable, state);
}

/// An executable made at run time, owned by a Python object (a new reference; nullptr +
/// error). Keep the object alive while frames of it run; Tracebacks holding its frames keep
/// it alive themselves. `free_user_data(user_data)` runs when it dies.
inline PyObject *new_executable(const char *name, const char *kind, Reifier reify,
                                void *user_data = nullptr,
                                void (*free_user_data)(void *) = nullptr) noexcept {
  return detail::native_api->new_executable(name, kind, reify, user_data, free_user_data);
}

/// The visible code of `executable` (see NativeFrame's third argument): its synthetic code
/// object for states [0, states), each reified once now through the executable's reifier.
/// nullptr where visible frames are unavailable (a RuntimeWarning, no error) or with an error.
/// GIL held; call once per executable and keep the result.
inline const VisibleCode *visible_code(const Executable &executable, std::size_t states) {
  return detail::native_api->visible_code(&executable, states);
}

/// Gives frames of `executable` their variables: `fn(executable, state, context)` returns a
/// new mapping of names to values (or nullptr + error), called only when something reads
/// them (docs/native.md, "Variables"). nullptr removes it. Call before the executable's first
/// visible push. False + Python error (also when the installed _callsite predates it).
inline bool set_locals(const Executable &executable, LocalsReifier fn,
                       void *context = nullptr) noexcept {
  if (!has_entry(offsetof(NativeAPI, set_locals))) {
    PyErr_SetString(PyExc_RuntimeError,
                    "callsite: the installed _callsite has no locals reifiers (too old)");
    return false;
  }
  return detail::native_api->set_locals(&executable, fn, context) == 0;
}

/// The Executable of a callsite.native.Executable object, or nullptr + TypeError.
inline const Executable *executable_of(PyObject *obj) noexcept {
  return detail::native_api->executable_of(obj);
}

/// callsite.boundary for a C++ scope: while it lives, every capture, first user frame and MLIR
/// location on this thread (and asyncio task) ends at the innermost frame running `kernel`'s
/// code, which filters keep; nothing below it is walked. Nestable; destroying one removes
/// exactly that boundary (any order), on the thread that made it. GIL held for both.
class Boundary {
 public:
  /// `kernel`: a function, method or code object (or a wrapper of one via __wrapped__).
  explicit Boundary(PyObject *kernel) noexcept
      : token_(detail::native_api->open_boundary(kernel)) {}
  /// Not copyable: one boundary is closed once.
  Boundary(const Boundary &) = delete;
  /// Not assignable: one boundary is closed once.
  Boundary &operator=(const Boundary &) = delete;
  /// Closes the boundary if close() has not; an error closing it is reported as unraisable.
  ~Boundary() {
    if (!close()) PyErr_WriteUnraisable(nullptr);
  }

  /// False when opening failed (a Python error is set: TypeError for a bad kernel).
  explicit operator bool() const noexcept { return token_ != nullptr; }

  /// Closes it now (the destructor does otherwise). False with a Python error. An error
  /// already set when it closes is kept.
  bool close() noexcept {
    if (!token_) return true;
    detail::ErrorSetAside pending;
    const int rc = detail::native_api->close_boundary(token_);
    Py_CLEAR(token_);
    return rc == 0;
  }

 private:
  PyObject *token_;  ///< what close_boundary() takes; nullptr once closed or on failure
};

}  // namespace callsite::api
