// callsite/symbolize.h — from a raw frame to file, name, line and column range (cached).
#pragma once
#include <Python.h>

#include "callsite/frame.h"

namespace callsite {

/// A symbolized frame, with `traceback.FrameSummary`'s field names. Positions are as
/// `code.co_positions()` gives them (columns 0-based, end exclusive); -1 stands for None.
/// The objects are borrowed from the code object (or the native reification cache) and live
/// as long as the Traceback or frame that holds the raw frame.
struct FrameInfo {
  FrameKind kind = FrameKind::python;
  PyObject *filename = nullptr;  ///< str
  PyObject *name = nullptr;      ///< str: co_name
  PyObject *qualname = nullptr;  ///< str: co_qualname (co_name on 3.10)
  PyObject *code = nullptr;      ///< the code object; for native frames the reified one or null
  int lineno = -1, end_lineno = -1, colno = -1, end_colno = -1;
};

/// Symbolizes one frame. Line tables are decoded once per code object and cached with it, so
/// a repeat costs a lookup. Returns false with a Python error set on failure. GIL held.
bool symbolize(const RawFrame &frame, FrameInfo *out) noexcept;

}  // namespace callsite
