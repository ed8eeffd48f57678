// mlir/capi.h — MLIR's C API as the bindings' own shared library exports it: locations built
// without a Python call per frame and per call-site link (only the op's final location becomes
// an ir.Location). Bindings whose library does not export it (MLIR linked in statically with
// hidden symbols, as jaxlib does) keep the Python API builder (mlir/build_python.h).
//
// callsite does not build against MLIR's headers: the handle types and signatures below are
// declared here as mlir-c/IR.h and mlir-c/Support.h declare them (LLVM 20–22: a handle is a
// struct holding one pointer, MlirStringRef is {data, length}, all passed by value).
#pragma once
#include <Python.h>

#include <cstddef>

namespace callsite::mlir {

struct BindingsObject;  // mlir/bindings.h

namespace capi {

struct MlirContext {
  void *ptr;
};
struct MlirLocation {
  const void *ptr;
};
struct MlirIdentifier {
  const void *ptr;
};
struct MlirStringRef {
  const char *data;
  std::size_t length;
};

/// The functions used, resolved in the library the bindings' `_mlir` extension loaded.
struct Api {
  MlirLocation (*file_line_col)(MlirContext, MlirStringRef, unsigned, unsigned);
  MlirLocation (*file_line_col_range)(MlirContext, MlirStringRef, unsigned, unsigned, unsigned,
                                      unsigned);
  MlirLocation (*name)(MlirContext, MlirStringRef, MlirLocation);
  MlirLocation (*call_site)(MlirLocation, MlirLocation);
  MlirLocation (*unknown)(MlirContext);
  bool (*is_a_name)(MlirLocation);
  MlirIdentifier (*name_get_name)(MlirLocation);
  MlirLocation (*name_get_child)(MlirLocation);
  MlirStringRef (*identifier_str)(MlirIdentifier);
  /// Optional (nullptr when the library lacks one): which typed class an explicit
  /// callsite.mlir.location() returns (kTypedLocations' order). Nothing else uses them.
  bool (*is_a_typed[5])(MlirLocation);
};

}  // namespace capi

/// Looks up MLIR's C API for bindings `b` (the `_mlir` extension of its Context class, the
/// library it loaded), once, at registration. Sets b->capi, or leaves it null and says why in
/// b->capi_status. Never fails: the Python API path is always there.
void resolve_capi(BindingsObject *b) noexcept;

/// Releases what resolve_capi and context_pointer stored in `b` (its type's dealloc).
void release_capi(BindingsObject *b) noexcept;

/// The MlirContext of `ctx` (ctx._CAPIPtr, a capsule named "<prefix>ir.Context._CAPIPtr"), and
/// on the first context the Location capsule name of these bindings. nullptr without an error
/// when the capsule is not what MLIR makes (the caller takes the Python API path).
void *context_pointer(BindingsObject *b, PyObject *ctx);

/// The MlirLocation of an ir.Location (loc._CAPIPtr); {nullptr} + error.
capi::MlirLocation location_pointer(BindingsObject *b, PyObject *loc);

/// `loc` as an ir.Location (Location._CAPICreate of a capsule). New reference, nullptr + error.
PyObject *wrap_location(BindingsObject *b, capi::MlirLocation loc);

}  // namespace callsite::mlir
