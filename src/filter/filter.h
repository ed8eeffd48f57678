// filter/filter.h — which frames are the user's: include/exclude rules on co_filename (MLIR's).
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/frame.h"
#include "capture/walk_end.h"

namespace callsite {

/// True if `obj` is a callsite.Filter.
bool is_filter(PyObject *obj) noexcept;

/// The process-wide default Filter (borrowed): excludes generated `*_ops_gen.py` modules and
/// callsite's own files, limit 10 — what MLIR's loc_tracebacks() has in effect by default.
/// Made at first use by the maker the Python layer registers at module init (the Filter type
/// is there); nullptr with an error if making it fails or nothing is registered.
PyObject *default_filter() noexcept;

/// Registers `make` (a new reference to a callsite.Filter, or nullptr with an error) as the
/// way default_filter() makes the default. Once, at module init.
void set_default_filter_maker(PyObject *(*make)()) noexcept;

/// Whether `filter` keeps frames of `code`: a frame is kept when its co_filename matches an
/// include rule, or else matches no exclude rule (MLIR's isUserTracebackFilename). 1 keep,
/// 0 drop, -1 error (TypeError when `filter` is not a Filter). Cached per code object, so a
/// repeated code object costs a lookup; a rule change invalidates. GIL held.
int filter_keeps(PyObject *filter, PyCodeObject *code);

/// Copies the frames of `frames[0..n)` that `filter` keeps into `out`, in order, stopping
/// after filter_limit(filter, limit) kept frames (the limit counts kept frames, the walk goes
/// on past dropped ones). When the walk ended at the boundary (`end`), frames[n-1] is a kernel
/// boundary's frame (capture/boundary.h): it is kept whatever the rules say, as the last
/// entry, the limit leaving room for it. `out` must have room for min(n, limit). Returns the
/// number written, or SIZE_MAX with a Python error set. GIL held.
std::size_t filter_frames(PyObject *filter, const RawFrame *frames, std::size_t n,
                          RawFrame *out, std::size_t limit = SIZE_MAX,
                          WalkEnd end = WalkEnd::complete);

/// The kept frames of `frames[0..n)` (filter_frames), as a new Traceback, which remembers
/// an `end` at the boundary. New reference, or nullptr with an error (TypeError when
/// `filter` is not a Filter).
PyObject *filtered_traceback(PyObject *filter, const RawFrame *frames, std::size_t n,
                             std::size_t limit, WalkEnd end = WalkEnd::complete);

/// How many kept frames a query on `filter` with the caller's `limit` returns at most: the
/// smaller of the two (each counts kept frames; SIZE_MAX: none). The one place the two
/// limits meet. SIZE_MAX with TypeError set when `filter` is not a Filter.
std::size_t filter_limit(PyObject *filter, std::size_t limit = SIZE_MAX) noexcept;

/// The filter's generation: a process-wide unique number for each state of each Filter,
/// renewed by every rule change, so a decision cached with it is valid while it matches.
/// 0 with TypeError set when `filter` is not a Filter.
std::uint64_t filter_generation(PyObject *filter) noexcept;

/// The loop every "at most `limit` kept entries" query runs: keeps(i) for i = 0, 1, ... < n
/// (1 keep, 0 drop, -1 error) and emit(i) for each kept one (false: error), stopping after
/// `limit` kept ones. The limit counts kept entries; the walk goes on past dropped ones, as
/// MLIR's does. Returns how many were kept, or SIZE_MAX on error.
template <class Keeps, class Emit>
inline std::size_t keep_first(std::size_t n, std::size_t limit, Keeps &&keeps, Emit &&emit) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < n && kept < limit; ++i) {
    const int keep = keeps(i);
    if (keep < 0) return SIZE_MAX;
    if (keep && !emit(i)) return SIZE_MAX;
    kept += std::size_t(keep != 0);
  }
  return kept;
}

}  // namespace callsite
