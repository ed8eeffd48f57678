// capture/boundary.h — the kernel boundary in force for the calling thread and asyncio task:
// the code object at which every walk of the stack stops (capture, Filter.first_user_frame,
// MLIR locations), so a DSL's ops name the kernel and the helpers it called, never the
// framework that called the kernel.
#pragma once
#include <Python.h>

#include <atomic>
#include <cstddef>

#include "callsite/frame.h"

namespace callsite {

namespace detail {

/// The state of one callsite.boundary (its Python type is python/boundary_type.cc). The open
/// boundaries of a context form a chain of tuples (boundary, outer), innermost first, `outer`
/// being the enclosing node or None; the chain holds each boundary strongly, so a boundary in
/// any context's chain is alive.
struct BoundaryObject {
  PyObject_HEAD
  /// The kernel's code object as written (kernel_code()).
  PyObject *code;
  /// The code object of a rewritten kernel recognised by its origin (same_origin() below),
  /// or nullptr: while set, walks stop at it by identity. Owned; learned once per `with`
  /// and dropped when it closes, where no walk is using it.
  PyObject *rewritten;
  /// The kernel's last source line (max over its line table), 0 until first needed.
  int last_line;
  /// Inside its `with` (or a C++ api::Boundary's lifetime).
  bool entered;
};

/// callsite.boundary; created by the Python-facing layer at init.
extern PyTypeObject *boundary_type;

inline BoundaryObject *as_boundary(PyObject *o) noexcept {
  return reinterpret_cast<BoundaryObject *>(o);
}
inline bool is_boundary(PyObject *o) noexcept {
  return boundary_type && Py_IS_TYPE(o, boundary_type);
}

/// Boundaries open in the whole process: while none is, no walk reads the context variable,
/// so a program that never opens one pays one load and a branch per walk.
extern std::atomic<std::size_t> open_boundaries;
/// The context variable's chain (see BoundaryObject), borrowed, or nullptr.
PyObject *boundary_chain_slow() noexcept;
}  // namespace detail

/// The innermost open boundary of the calling context as a borrowed (boundary, outer) tuple,
/// or nullptr when none is open. Borrowed from the current context, which keeps it alive while
/// no Python code runs. GIL held; never sets an error.
inline PyObject *boundary_chain() noexcept {
  if (detail::open_boundaries.load(std::memory_order_relaxed) == 0) [[likely]]
    return nullptr;
  return detail::boundary_chain_slow();
}

/// The code object the innermost open boundary stops at by identity (borrowed), or nullptr:
/// its kernel's, or the rewritten kernel's once recognised.
inline PyCodeObject *innermost_boundary(PyObject *chain) noexcept {
  if (!chain) return nullptr;
  const detail::BoundaryObject *b = detail::as_boundary(PyTuple_GET_ITEM(chain, 0));
  return reinterpret_cast<PyCodeObject *>(b->rewritten ? b->rewritten : b->code);
}

/// Where the boundaries of `chain` cut `frames[0..n)` when the walk did not stop at the
/// innermost one's code: the length up to and including the innermost frame running the
/// innermost boundary's kernel as rewritten by a DSL (same file and name, first line within
/// the kernel's lines), or else, once the walk is `complete`, the innermost frame running any
/// enclosing boundary's kernel (either way). 0 when none does. Runs no Python code. GIL held.
std::size_t boundary_cut(PyObject *chain, const RawFrame *frames, std::size_t n,
                         bool complete) noexcept;

/// The code object a kernel stands for: a code object itself, a function, a bound method or
/// classmethod/staticmethod (their function), anything wrapping one through `__wrapped__`
/// (functools.wraps), or an object with a `__code__`. New reference, or nullptr with a
/// TypeError naming `argument`.
PyObject *kernel_code(PyObject *kernel, const char *argument) noexcept;

/// A new, not yet entered callsite.boundary for `kernel` (kernel_code, its errors naming
/// `argument`), or nullptr with an error set.
PyObject *new_boundary(PyObject *kernel, const char *argument) noexcept;

/// Makes `boundary` the innermost of the calling context. 0, or -1 with RuntimeError when it
/// is already open.
int enter_boundary(PyObject *boundary) noexcept;

/// Removes exactly `boundary` from the calling context's chain, wherever it is in it (the
/// boundaries opened inside it and not yet closed stay in force). 0, or -1 with RuntimeError
/// when it is not open, or open in another context only.
int exit_boundary(PyObject *boundary) noexcept;

/// Opens a boundary at `kernel` (kernel_code) for the calling context: returns the token that
/// closes it (the boundary object, a new reference), or nullptr with an error set.
PyObject *open_boundary(PyObject *kernel) noexcept;

/// Closes the boundary `token` opened (exit_boundary). 0, or -1 with an error (not a token of
/// open_boundary(), a token open in another context only, or closed twice).
int close_boundary(PyObject *token) noexcept;

}  // namespace callsite
