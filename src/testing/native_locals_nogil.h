// testing/native_locals_nogil.h — C++ frames with their own locals reifier pushed and popped
// by threads that do not hold the GIL (as the docs allow for any C++ frame), while the
// calling thread reads its own frame's variables.
#pragma once
#include <Python.h>

#include <cstddef>

namespace callsite::testing {

/// Starts `threads` threads with no Python thread state, each pushing and popping `pushes`
/// NativeFrameWithLocals; meanwhile the calling thread (GIL held) runs inside its own
/// NativeFrameWithLocals (state 7, variables {"main": 7}) calling `reader()` until they are
/// done. Returns (frames the threads pushed, whether every reader() call returned True), or
/// nullptr + error.
PyObject *frames_with_locals_without_gil(std::size_t threads, std::size_t pushes,
                                         PyObject *reader) noexcept;

}  // namespace callsite::testing
