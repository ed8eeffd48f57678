// mlir/build_python.h — locations built through the bindings' own Python API
// (Location.file/.name/.callsite/.unknown): works with any distribution of the bindings, and
// only cache misses get here. The builder of a Context whose bindings do not export MLIR's C
// API (mlir/build_capi.h), or when the tests force it.
#pragma once
#include <Python.h>

#include <memory>

#include "mlir/location_builder.h"

namespace callsite::mlir {

/// A new Python API builder for `context` of bindings `b`, or nullptr + MemoryError.
std::unique_ptr<LocationBuilder> make_python_builder(BindingsObject *b, PyObject *context) noexcept;

/// Interns the keyword names used in calls; once at module init (python/init.cc).
bool init_build_python() noexcept;

}  // namespace callsite::mlir
