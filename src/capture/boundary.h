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
/// Boundaries open in the whole process: while none is, no walk reads the context variable,
/// so a program that never opens one pays one load and a branch per walk.
extern std::atomic<std::size_t> open_boundaries;
/// The context variable holding the innermost open boundary: a tuple (code, outer), `outer`
/// being the enclosing boundary's tuple or None.
PyObject *boundary_chain_slow() noexcept;
}  // namespace detail

/// The innermost open boundary of the calling context as a borrowed (code, outer) tuple, or
/// nullptr when none is open. Borrowed from the current context, which keeps it alive while no
/// Python code runs. GIL held; never sets an error.
inline PyObject *boundary_chain() noexcept {
  if (detail::open_boundaries.load(std::memory_order_relaxed) == 0) [[likely]]
    return nullptr;
  return detail::boundary_chain_slow();
}

/// The code object the innermost open boundary stops at (borrowed), or nullptr.
inline PyCodeObject *innermost_boundary(PyObject *chain) noexcept {
  return chain ? reinterpret_cast<PyCodeObject *>(PyTuple_GET_ITEM(chain, 0)) : nullptr;
}

/// Where an outer boundary cuts `frames[0..n)` when the innermost one is not on the stack: the
/// length up to and including the innermost frame running any enclosing boundary's code, or
/// 0 when none does.
std::size_t outer_boundary_cut(PyObject *chain, const RawFrame *frames, std::size_t n) noexcept;

/// The code object a kernel stands for: a code object itself, a function, a bound method or
/// classmethod/staticmethod (their function), anything wrapping one through `__wrapped__`
/// (functools.wraps), or an object with a `__code__`. New reference, or nullptr with a
/// TypeError naming `argument`.
PyObject *kernel_code(PyObject *kernel, const char *argument) noexcept;

/// Opens a boundary at `kernel` (kernel_code) for the calling context: returns the token that
/// closes it (a new reference), or nullptr with an error set.
PyObject *open_boundary(PyObject *kernel) noexcept;

/// Closes the boundary `token` opened, restoring the enclosing one. 0, or -1 with an error
/// (a token from another context, or closed twice).
int close_boundary(PyObject *token) noexcept;

}  // namespace callsite
