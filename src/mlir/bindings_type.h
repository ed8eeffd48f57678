// mlir/bindings_type.h — the Python type callsite.mlir.MlirBindings.
#pragma once
#include <Python.h>

namespace callsite::mlir {

extern PyTypeObject *bindings_type;

/// Creates the type; once at module init (python/init.cc). nullptr + error.
PyTypeObject *init_bindings_type() noexcept;

}  // namespace callsite::mlir
