// mlir/build_capi.h — locations built through MLIR's C API (mlir/capi.h) in the bindings' own
// library: raw handles per frame and per call-site link, cached per Context, and one
// ir.Location per distinct final location. No Python call per frame or link.
#pragma once
#include <Python.h>

#include <memory>

#include "mlir/location_builder.h"

namespace callsite::mlir {

/// A new C API builder for `context` (of bindings `b`, which have b->capi), whose MlirContext
/// is `mlir_context`, or nullptr + MemoryError. Its raw handles belong to that context: the
/// cache that owns the builder must end with the context (it is made only where a weak
/// reference sees the context die, mlir/context_cache.cc).
std::unique_ptr<LocationBuilder> make_capi_builder(BindingsObject *b, PyObject *context,
                                                   void *mlir_context) noexcept;

}  // namespace callsite::mlir
