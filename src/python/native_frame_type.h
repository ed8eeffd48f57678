// python/native_frame_type.h — callsite.native.NativeFrame (a frame pushed from Python) and
// the function wrapper its decorator form returns.
#pragma once
#include <Python.h>

#include <cstdint>

#include "native/executable.h"

namespace callsite::native {

/// PyNativeFrame::special: what a pop undoes beyond unlinking from the thread's stack (one
/// byte, so that the common pop tests one load).
enum : std::uint8_t {
  kParked = 1,     ///< pushed from a generator: kept by marker (shadow_stack.h)
  kOwnLocals = 2,  ///< `locals` is registered as the frame's own reifier (frame_locals.h)
};

struct PyNativeFrame {
  PyObject_HEAD
  NativeLink link;
  ExecutableObject *executable;  ///< strong
  ThreadStack *stack;            ///< the stack it is on while pushed on a thread's stack
  std::uint8_t special;          ///< kParked | kOwnLocals
  PyObject *locals;  ///< this activation's variables: a mapping, a callable (state), or nullptr
  PyObject *weakrefs;
  VisibleSlot visible_slot;    ///< the interpreter frame while pushed visibly (decorator form)
  const VisibleCode *visible;  ///< its executable's code while pushed visibly
};

extern PyTypeObject *native_frame_type;
extern PyTypeObject *framed_function_type;
PyTypeObject *init_native_frame_types() noexcept;

/// A new, not yet pushed frame of `executable`. New reference or nullptr + error.
PyObject *new_native_frame(ExecutableObject *executable, std::uintptr_t state) noexcept;

/// A state argument: an int in [0, 2**64). False + TypeError/OverflowError.
bool parse_state(PyObject *value, std::uintptr_t *out) noexcept;

/// callsite.native.current(): the innermost frame pushed from Python that is active in the
/// calling code, or None. New reference.
PyObject *current_native_frame() noexcept;

/// callsite.native.current as a builtin function (METH_NOARGS, current_native_frame()).
extern PyMethodDef current_method;

/// callsite.native.stack(): [(name, kind, state), ...] of every native frame a capture here
/// would see, innermost first. New reference.
PyObject *native_stack() noexcept;

}  // namespace callsite::native
