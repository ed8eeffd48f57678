// mlir/bindings.h — one set of MLIR Python bindings (mlir.ir, iree.compiler.ir, jaxlib.mlir.ir…)
// as callsite uses it: the classes it builds locations with and the op builders it wraps.
// The Python type (MlirBindings) is mlir/bindings_type.cc; installing the wrappers is
// mlir/wrappers.cc.
#pragma once
#include <Python.h>

#include <vector>

namespace callsite::mlir {

namespace capi {
struct Api;  // mlir/capi.h
}

struct BindingsObject {
  PyObject_HEAD
  PyObject *ir;  ///< the `ir` module
  PyObject *context_type, *location_type, *opview_type, *operation_type, *module_type;
  PyObject *nameloc_type;  ///< ir.NameLoc, or nullptr in bindings without typed locations
  /// The typed location classes (ir.CallSiteLoc, NameLoc, FileLineColLoc, UnknownLoc,
  /// FusedLoc: capi::Api::is_a_typed's order), each nullptr when the bindings lack it; their
  /// constructor casts a plain ir.Location. What an explicit location() returns on the C API
  /// path, whose ir.Location objects are plain (Location._CAPICreate).
  static constexpr int kTypedLocations = 5;
  PyObject *typed_location_types[kTypedLocations];
  /// Location.file / .name / .callsite / .unknown: nanobind static functions, called directly.
  PyObject *loc_file, *loc_name, *loc_callsite, *loc_unknown;
  /// References one ir.Location holds to its ir.Context (measured on first use, -1 before):
  /// what lets a cache tell that only its own locations keep a context alive.
  int refs_per_location;
  int active_scopes;   ///< auto_locations scopes (all threads) that need the wrappers
  /// Every entry point where the bindings resolve a default location and consult MLIR's
  /// traceback switch (MainModule.cpp maybeGetTracebackLocation's callers): the original
  /// OpView.__init__, OpView.build_generic, Operation.create, Module.create.
  static constexpr int kEntryPoints = 4;
  PyObject *saved[kEntryPoints];
  PyObject *installed[kEntryPoints];  ///< what we put in their place (to restore only our own)
  /// The snapshot of MLIR's process-wide switches that threads without an auto_locations
  /// scope use: an MlirSettings published by callsite.mlir's knobs (python/callsite/
  /// _mlir_knobs.py owns them), nullptr or None when the switch is off.
  PyObject *process_settings;
  /// MLIR's C API in the library these bindings loaded (mlir/capi.h), or nullptr: locations are
  /// then built through the Python API (mlir/build_python.h). Resolved at registration.
  const capi::Api *capi;
  PyObject *capi_create;         ///< Location._CAPICreate (with `capi`)
  /// The getter of the static property `Context.current` / `Location.current`, called
  /// directly while the class's version tag is the one it was found under (any change to the
  /// class or a base retags it); nullptr until found, or where `current` is something else.
  struct CurrentGetter {
    PyObject *fget;
    unsigned int version;
  } context_current, location_current;
  PyObject *capi_status;         ///< str: which path builds locations, and why (the doctor's)
  char *location_capsule;        ///< "<prefix>ir.Location._CAPIPtr", from the first Context
  bool python_api_forced;        ///< the Python API path even with `capi` (tests; private)
};

/// The C API when these bindings build locations through it, else nullptr.
inline const capi::Api *location_capi(const BindingsObject *b) noexcept {
  return b->python_api_forced ? nullptr : b->capi;
}

/// Fills `b` (freshly allocated) from the module `ir`; false + TypeError when `ir` is not MLIR
/// bindings. Its C API (mlir/capi.h resolve_capi) is looked up next, then it is registered.
bool fill_bindings(BindingsObject *b, PyObject *ir) noexcept;

/// Adds `b` (filled) to the registry, which takes a reference: bindings are never unloaded.
/// False + MemoryError.
bool register_bindings(BindingsObject *b) noexcept;

/// The bindings already registered for `ir`, or nullptr.
BindingsObject *registered_bindings(PyObject *ir) noexcept;

/// Releases the classes and functions `b` holds (its type's dealloc; mlir/capi.h
/// release_capi releases the rest).
void clear_bindings(BindingsObject *b) noexcept;

/// Every BindingsObject created (strong references; bindings live as long as the process).
const std::vector<BindingsObject *> &all_bindings() noexcept;

/// `Context.current` of these bindings: new reference, or nullptr *without* an error when no
/// context is current (an error only on a real failure).
PyObject *current_context(BindingsObject *b) noexcept;

/// `Location.current`, same conventions.
PyObject *current_location(BindingsObject *b) noexcept;

/// The bindings whose Context type `ctx` is an instance of, or nullptr.
BindingsObject *bindings_of_context(PyObject *ctx) noexcept;

/// Interns the attribute names used here; once at module init (python/init.cc).
bool init_bindings() noexcept;

}  // namespace callsite::mlir
