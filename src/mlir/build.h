// mlir/build.h — builds ir.Location objects through the bindings' own Python API (any
// distribution of the bindings works; only cache misses get here). A cache whose bindings
// export MLIR's C API builds through mlir/build_capi.h instead.
#pragma once
#include <Python.h>

#include "callsite/frame.h"
#include "mlir/context_cache.h"

namespace callsite::mlir {

/// The NameLoc of one frame, as MLIR's tracebackToLocation builds it: 3.11+
/// NameLoc(co_qualname, FileLineColRange(file, line, col, end_line, end_col)); 3.10
/// NameLoc(co_name, FileLineColLoc(file, line, 0)). Cached per (code, lasti); borrowed.
PyObject *frame_location(ContextCache &cc, const RawFrame &frame);

/// Location.unknown(context) (cached; borrowed).
PyObject *unknown_location(ContextCache &cc);

/// Location.callsite(callee, [caller]): CallSiteLoc(callee, caller). New reference.
PyObject *callsite_location(ContextCache &cc, PyObject *callee, PyObject *caller);

/// `inner` wrapped in the NameLoc names of `current` (outermost name first), as MLIR's
/// CurrentLocAction.NAMELOC_WRAP does; `inner` itself when `current` is no NameLoc. Cached
/// per (current, inner); `own_inner` says whether the cache must keep `inner` alive (it is
/// not one of its own). Borrowed.
PyObject *nameloc_wrap(ContextCache &cc, PyObject *current, PyObject *inner,
                       bool own_inner);

/// Interns the keyword names used in calls; once at module init (python/init.cc).
bool init_build() noexcept;

}  // namespace callsite::mlir
