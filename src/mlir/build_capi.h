// mlir/build_capi.h — locations built through MLIR's C API (mlir/capi.h) for a cache whose
// context has it (ContextCache::mlir_context): raw handles per frame and per call-site link,
// cached per context, and one ir.Location per distinct final location.
#pragma once
#include <Python.h>

#include "callsite/frame.h"
#include "mlir/capi.h"
#include "mlir/context_cache.h"

namespace callsite::mlir {

/// The location of given kept frames (innermost first), as kept_location (mlir/locate.h)
/// builds it: unknown, one NameLoc, or the CallSiteLoc chain. Borrowed from the cache.
/// `*repeated` (when given) is set when the cache had made this location before.
PyObject *kept_location_capi(ContextCache &cc, const RawFrame *kept, std::size_t m,
                             bool *repeated = nullptr);

/// What an explicit callsite.mlir.location() returns for `loc` (a final location of this cache,
/// held by the caller): its typed class (ir.CallSiteLoc, ir.NameLoc...) as the Python API path
/// gives, made once per distinct location and cached; `loc` itself when the bindings have no
/// typed class (or predicate) for its kind. Steals `loc`; new reference, nullptr + error.
PyObject *typed_location_capi(ContextCache &cc, PyObject *loc);

/// nameloc_wrap (mlir/build.h) through the C API. Borrowed from the cache.
PyObject *nameloc_wrap_capi(ContextCache &cc, PyObject *current, PyObject *inner,
                            bool own_inner);

}  // namespace callsite::mlir
