// filter/decisions.h — the state of a callsite.Filter and the per-code-object decision fast
// path (the type's Python methods are in src/python/filter_type.cc).
#pragma once
#include <Python.h>

#include <cstdint>

#include "callsite/frame.h"
#include "capture/walk_end.h"
#include "filter/rules.h"
#include "symbolize/code_info.h"

namespace callsite::detail {

struct FilterObject {
  PyObject_HEAD
  /// Unique over the process for each state of each Filter: a new Filter and every rule change
  /// take a fresh generation, so a cached decision is valid iff it carries the filter's generation.
  std::uint64_t generation;
  std::size_t limit;         ///< counts kept frames; SIZE_MAX = no limit
  Rules *rules;              ///< owned
  PyObject *filename_cache;  ///< dict str -> bool for this generation: one regex run per file
  PyObject *weakreflist;
};

/// The callsite.Filter type; created by the Python-facing layer at init.
extern PyTypeObject *filter_type;

inline bool is_filter_object(PyObject *o) noexcept {
  return filter_type && PyObject_TypeCheck(o, filter_type);
}
inline FilterObject *as_filter(PyObject *o) noexcept { return reinterpret_cast<FilterObject *>(o); }

/// The generation and limit of an object the caller has checked with is_filter(): no type
/// test, for the per-op paths (MLIR locations). Unchecked: callsite::filter_generation() and
/// callsite::filter_limit() (filter/filter.h).
inline std::uint64_t generation_of(PyObject *filter) noexcept {
  return as_filter(filter)->generation;
}
inline std::size_t limit_of(PyObject *filter) noexcept { return as_filter(filter)->limit; }

/// The decisions cached on one code object (CodeInfo::extension): a few (generation, keep) slots,
/// replaced round-robin, since several Filters may coexist.
struct FilterDecisions final : CodeInfoExtension {
  static constexpr int kSlots = 4;
  struct Slot {
    std::uint64_t generation = 0;
    bool keep = false;
  } slots[kSlots];
  unsigned next = 0;
};

// One name for the decision, `keeps`, overloaded by what it is asked of (a filename, a code
// object, a raw frame); `keeps_uncached` is its out-of-line path where a cached one is inline.

/// Whether `f` keeps frames of `filename` (per-filter dict, then the rules). 1/0/-1.
int keeps(FilterObject *f, PyObject *filename);

/// The uncached path of keeps(f, code, info): decides and records the decision on `info` (if
/// any).
int keeps_uncached(FilterObject *f, PyCodeObject *code, CodeInfo *info);

/// Whether `f` keeps frames of `code`, `info` being code's CodeInfo (or nullptr): a scan of
/// four slots when the decision is cached. 1/0/-1. Hot: runs per frame per captured location.
inline int keeps(FilterObject *f, PyCodeObject *code, CodeInfo *info) {
  if (info && info->extension) {
    const auto *d = static_cast<const FilterDecisions *>(info->extension.get());
    for (const auto &slot : d->slots)
      if (slot.generation == f->generation) return slot.keep;
  }
  return keeps_uncached(f, code, info);
}

/// keeps(f, frame) for a native frame: by the filename it reifies to. 1/0/-1.
int keeps_uncached(FilterObject *f, const RawFrame &frame);

/// Whether `f` keeps the raw frame (Python frames by code object, native ones by the
/// filename they reify to). 1/0/-1. Hot: inline, as keeps(f, code, info).
inline int keeps(FilterObject *f, const RawFrame &frame) {
  if (frame.is_python()) {
    auto *code = static_cast<PyCodeObject *>(frame.code());
    return keeps(f, code, code_info(code));
  }
  return keeps_uncached(f, frame);
}

/// As callsite::filter_frames(), but `limit` alone bounds the result (the caller resolved it
/// with callsite::filter_limit(), or, for MLIR locations, by MLIR's rule that an explicit
/// limit replaces the filter's). 1 keep, 0 drop per frame; returns the number kept or SIZE_MAX
/// with an error. `filter` must be a checked Filter.
std::size_t keep_frames(PyObject *filter, const RawFrame *frames, std::size_t n, RawFrame *out,
                        std::size_t limit, WalkEnd end = WalkEnd::complete);

/// A new generation (process-wide counter).
std::uint64_t next_filter_generation() noexcept;

}  // namespace callsite::detail
