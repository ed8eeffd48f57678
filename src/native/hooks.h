// native/hooks.h — what the capture and symbolize core need from the native-frame subsystem.
#pragma once
#include <Python.h>

#include "callsite/frame.h"
#include "callsite/symbolize.h"

namespace callsite::native {

/// The calling thread's innermost native frame, or nullptr. Hot: read on every capture.
const NativeLink *innermost() noexcept;

/// A Traceback holding a native entry keeps its executable alive through these (a no-op for
/// executables with static storage). GIL held.
void retain(const Executable *executable) noexcept;
void release(const Executable *executable) noexcept;

/// Reifies a native entry (lazily, cached per (executable, state)). False + Python error.
bool symbolize(const RawFrame &frame, FrameInfo *out) noexcept;

}  // namespace callsite::native
