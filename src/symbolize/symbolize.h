// symbolize/symbolize.h — from a raw frame to file, name, line and column range (cached).
#pragma once
#include <Python.h>

#include "callsite/frame.h"

namespace callsite {

/// Symbolizes one frame. Line tables are decoded once per code object and cached with it, so
/// a repeat costs a lookup. Returns false with a Python error set on failure. GIL held.
bool symbolize(const RawFrame &frame, FrameInfo *out);

/// How native entries are symbolized. The native subsystem registers its reifier cache here
/// at init (it sits beside symbolize, which must not include it); until then a native entry
/// fails with RuntimeError.
using NativeSymbolizer = bool (*)(const RawFrame &frame, FrameInfo *out);
void set_native_symbolizer(NativeSymbolizer symbolizer) noexcept;

}  // namespace callsite
