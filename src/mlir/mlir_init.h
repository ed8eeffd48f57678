// mlir/mlir_init.h — the MLIR wing's types and caches, made in their order at module import.
#pragma once

namespace callsite::mlir {

/// Creates the wing's interned names, types, ContextVar and gc callback: the settings first
/// (every other part reads them), the bindings' Python-API builder and the bindings registry
/// before the injectors that call them, the Context caches last but one (their gc callback
/// walks the registry), then the bindings' Python type. Once, at module init
/// (python/init.cc). GIL held; false with a Python error.
bool init();

}  // namespace callsite::mlir
