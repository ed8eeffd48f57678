// native/executable.h — executables made at run time: an Executable owned by a Python object
// (callsite.native.Executable; its Python methods are in src/python/executable_type.cc).
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::native {

/// `exe.owner` is the object itself, so Tracebacks and frames keep it alive by refcount.
struct ExecutableObject {
  PyObject_HEAD
  Executable exe;
  PyObject *name, *kind;  ///< str; exe.name / exe.kind point into their UTF-8 buffers
  PyObject *reifier;      ///< the Python reifier (callable), or nullptr for a C++ reifier
  PyObject *locations;    ///< locations=[...] as a tuple (state k -> item k), or nullptr
  void (*free_user_data)(void *);
  PyObject *weakrefs;
  /// visible=True: states the synthetic code maps (-1: shadow-only); the code itself is built
  /// on the first push (lazily from the reifier) or at construction (locations=[...]).
  Py_ssize_t visible_states;
  const VisibleCode *visible;
  bool warned_shadow_push;  ///< visible, but a frame was pushed by `with`/push(): warned once
  PyObject *locals;  ///< locals=: the Python locals reifier (state -> mapping), or nullptr
  PyObject *source;  ///< source=: the text of the guest file its locations name, or nullptr
  /// The file `source` is the text of (native/guest_module.h): its visible code's file, else
  /// the first file an entry of it named; nullptr until then.
  PyObject *source_file;
};

/// The callsite.native.Executable type; created by the Python-facing layer at init.
extern PyTypeObject *executable_type;

/// Allocates an instance of `type` named `name`/`kind` (str objects, borrowed), owner =
/// itself, no reifier yet. nullptr with an error set.
ExecutableObject *allocate_executable(PyTypeObject *type, PyObject *name, PyObject *kind) noexcept;

/// The tag stored in `exe.reify` for executables whose reifier is a Python callable.
int python_reifier(const Executable *, std::uintptr_t, NativeLocation *) noexcept;

inline ExecutableObject *python_owned(const Executable *exe) {
  return exe->owner ? reinterpret_cast<ExecutableObject *>(exe->owner) : nullptr;
}

/// api->new_executable / api->executable_of.
PyObject *new_executable(const char *name, const char *kind, Reifier reify, void *user_data,
                         void (*free_user_data)(void *)) noexcept;
const Executable *executable_of(PyObject *obj) noexcept;

}  // namespace callsite::native
