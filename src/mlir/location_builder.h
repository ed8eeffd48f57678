// mlir/location_builder.h — what one Context's cache builds its locations with, behind one
// interface: the bindings' Python API (mlir/build_python.h) or MLIR's C API in the bindings'
// own library (mlir/build_capi.h), chosen once when the Context's cache is made
// (mlir/context_cache.h). Each builder owns its per-frame, per-chain and nameloc_wrap tables;
// the cache above it keeps the whole-stack table, which both share.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/frame.h"

namespace callsite::mlir {

struct BindingsObject;  // mlir/bindings.h

/// The sizes a builder reports for callsite.mlir.cache_info().
struct BuilderCounts {
  std::size_t frames = 0;  ///< per-frame locations (Python objects or raw handles)
  std::size_t chains = 0;  ///< call-site chains (Python objects) or links (raw handles)
  std::size_t wraps = 0;   ///< nameloc_wrap entries
  std::size_t finals = 0;  ///< ir.Location objects made of raw final locations
  std::size_t other = 0;   ///< anything else held (Location.unknown(), typed locations)
  std::size_t held = 0;    ///< Location objects owned (each holds the context)
};

class LocationBuilder {
 public:
  /// `context` is borrowed: the cache that owns the builder lives no longer than its context
  /// (mlir/context_cache.cc), and builds only while a caller holds it.
  LocationBuilder(BindingsObject *b, PyObject *context, bool stores_first_stacks) noexcept
      : bindings(b), context(context), stores_first_stacks(stores_first_stacks) {}
  virtual ~LocationBuilder() = default;
  LocationBuilder(const LocationBuilder &) = delete;
  LocationBuilder &operator=(const LocationBuilder &) = delete;

  BindingsObject *const bindings;
  PyObject *const context;
  /// Whether the whole-stack table stores a stack the first time it is seen. The C API builder
  /// reaches a location with one probe per kept frame, so there a stack is stored only once its
  /// location was made before (mlir/locate.cc), and a new Context hashes and copies nothing.
  const bool stores_first_stacks;

  /// The location of the kept frames kept[0..m) (innermost first): unknown, one NameLoc, or
  /// the CallSiteLoc chain, as MLIR's tracebackToLocation builds it. Borrowed from this
  /// builder's tables; nullptr + error. `*made_before` is set when this builder had made that
  /// location before (false when it cannot tell).
  virtual PyObject *kept_location(const RawFrame *kept, std::size_t m, bool *made_before) = 0;
  /// What an explicit callsite.mlir.location() returns for `loc`, a location of
  /// kept_location(): the typed one (ir.CallSiteLoc...) where the builder's are plain. Steals
  /// `loc`; new reference, nullptr + error.
  virtual PyObject *explicit_location(PyObject *loc) = 0;
  /// `inner` wrapped in the NameLoc names of `current` (outermost name first), as MLIR's
  /// CurrentLocAction.NAMELOC_WRAP does; `inner` itself when `current` is no NameLoc.
  /// `own_inner`: whether the cache must keep `inner` alive (it is not one of its own).
  /// Borrowed.
  virtual PyObject *nameloc_wrap(PyObject *current, PyObject *inner, bool own_inner) = 0;

  /// Per-frame entries (what bounds the tables: mlir/locate.cc).
  virtual std::size_t frame_count() const noexcept = 0;
  virtual BuilderCounts counts() const noexcept = 0;
  /// Drops the chain-level tables (and nameloc_wrap's); per-frame locations stay.
  virtual void clear_sequences() noexcept = 0;
  /// Drops every table.
  virtual void clear_all() noexcept = 0;
};

}  // namespace callsite::mlir
