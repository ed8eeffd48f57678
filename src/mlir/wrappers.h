// mlir/wrappers.h — putting callsite's op-builder wrappers in place of one set of bindings'
// builders while a scope (or accelerate()) needs them, and restoring the originals.
#pragma once

namespace callsite::mlir {

struct BindingsObject;  // mlir/bindings.h

/// Installs the op-builder wrappers on the first scope, restores the originals with the last
/// (then drops the caches only their own locations keep alive). False + error.
bool acquire_wrappers(BindingsObject *b) noexcept;
bool release_wrappers(BindingsObject *b) noexcept;

}  // namespace callsite::mlir
