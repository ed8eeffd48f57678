// capture/traceback_pool.h — storage for callsite.Traceback objects, recycled by size class.
//
// Why: a capture is dominated by fixed costs once the walk is cheap, and the allocator is the
// largest of them. A Traceback of more than 29 entries is past pymalloc's 512-byte limit, so
// every capture of a stack deeper than that paid glibc malloc + free (a step in the per-depth
// curve), and even pymalloc's round trip is a large share of a capture (docs/internals.md). Compilers capture once per op and drop the Traceback soon after, so the blocks
// freed are the ones about to be asked for again.
#pragma once
#include <Python.h>

#include <cstdint>

#include "capture/traceback_storage.h"

namespace callsite::detail {

/// An initialised Traceback object (refcount 1, type set, ob_size `n`, hash -1, no native
/// frames) with room for at least `n` entries; the entries are not initialised. nullptr with
/// MemoryError set when memory runs out.
TracebackObject *take_traceback_storage(Py_ssize_t n) noexcept;

/// The capacity take_traceback_storage(n) gives: n rounded up to its size class, or n itself
/// for stacks too deep to be recycled.
std::uint32_t traceback_capacity_for(Py_ssize_t n) noexcept;

/// Returns the storage of a Traceback whose references are already released (from tp_dealloc).
void give_traceback_storage(TracebackObject *tb) noexcept;

/// tp_dealloc: releases every entry's reference and recycles the storage. Hot: runs once
/// per dropped capture.
void traceback_dealloc(PyObject *self);

/// As callsite::new_traceback, but the code-object references in `frames` are handed over (the walker
/// took them); native executables are retained here when `may_have_native`. On failure the
/// references are released.
PyObject *adopt_traceback(const RawFrame *frames, Py_ssize_t n, bool may_have_native) noexcept;

}  // namespace callsite::detail
