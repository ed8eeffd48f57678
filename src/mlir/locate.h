// mlir/locate.h — the calling thread's stack as an ir.Location, through the caches.
#pragma once
#include <Python.h>

#include "filter/decisions.h"
#include "mlir/context_cache.h"

namespace callsite::mlir {

/// The location MLIR's loc_tracebacks() would build for the calling thread's stack (after
/// `skip` innermost frames): the kept frames of `filter` (a checked callsite.Filter), at most
/// `limit` of them (SIZE_MAX:
/// the filter's limit). A repeated stack costs one walk and one hash lookup. New reference
/// (the cache keeps its own), or nullptr with an error.
PyObject *stack_location(ContextCache &cc, PyObject *filter, std::size_t limit,
                         std::size_t skip);

/// The same for the frames of a callsite.Traceback captured earlier (trace, then emit): the
/// same caches, so a traceback equal to an earlier one (or to a stack seen) is one lookup.
PyObject *traceback_location(ContextCache &cc, PyObject *filter, std::size_t limit,
                             PyObject *tb);

/// The same from the calling thread's tracked call window (callsite.tracking) instead of a
/// stack walk: its most recent call sites the filter keeps, at most `limit`. RuntimeError
/// when tracking is off.
PyObject *window_location(ContextCache &cc, PyObject *filter, std::size_t limit);

/// callsite.mlir.location(filter=None, *, skip=0, context=None, limit=None), or
/// location(traceback, *, filter=None, context=None, limit=None) — METH_FASTCALL.
PyObject *location_py(PyObject *, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames);

/// Registers `fn` (called with no arguments; it registers every set of MLIR bindings already
/// imported, as callsite.mlir.bindings() does) for the lookups that find no bindings for a
/// context. The Python layer registers it at import; None (nullptr) unregisters.
void set_bindings_detector(PyObject *fn) noexcept;

}  // namespace callsite::mlir
