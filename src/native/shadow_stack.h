// native/shadow_stack.h — the per-thread stack of native frames and the registry of frames
// pushed from generators (which may be suspended, or resumed on another thread).
#pragma once
#include <Python.h>

#include <vector>

#include "callsite/native_frame.h"

namespace callsite::native {

/// api->push: links `link` as the calling thread's innermost frame (no allocation, no GIL).
ThreadStack *push(NativeLink *link, const Executable *executable, std::uintptr_t state) noexcept;

/// push, given the calling thread's current thread state (compat::current_tstate()).
ThreadStack *push_on(PyThreadState *ts, NativeLink *link, const Executable *executable,
                     std::uintptr_t state) noexcept;

/// push, with the marker of the Python frame running on the calling thread already known.
ThreadStack *push_marked(NativeLink *link, const Executable *executable, std::uintptr_t state,
                         const void *marker) noexcept;

/// api->misordered_pop: aborts with a message when `checked`, else unlinks `link` wherever it
/// is on `stack` (ignored when absent).
void misordered_pop(ThreadStack *stack, NativeLink *link, int checked) noexcept;

/// Removes `link` from `stack` wherever it is; false when it was not on it.
bool unlink(ThreadStack *stack, NativeLink *link) noexcept;

/// The calling thread's stack.
ThreadStack *this_thread() noexcept;

/// The marker of the Python frame running on the calling thread (nullptr: none), as the
/// capture walker compares it; safe without the GIL.
const void *current_marker() noexcept;

/// True when the Python frame running on the calling thread (GIL held) is a generator,
/// coroutine or async generator: frames pushed from it can outlive its activation (yield).
bool in_suspendable_frame() noexcept;

/// Frames pushed from suspendable Python frames are not on any thread's stack: they are
/// kept by the marker of their frame and spliced into a capture when that frame is running
/// on the capturing thread. GIL held.
bool park(NativeLink *link) noexcept;  ///< false + MemoryError
void unpark(NativeLink *link) noexcept;

/// True when any frame is parked (pushed from a generator that has not popped it). GIL held.
bool any_parked() noexcept;

/// The frames parked under `marker`, innermost last (nullptr: none). GIL held.
const std::vector<NativeLink *> *parked_under(const void *marker) noexcept;

/// The frame a link of the latest innermost() list is a copy of (itself when the list was not
/// spliced). GIL held.
const NativeLink *origin_of(const NativeLink *seen) noexcept;

/// The calling thread's native frames as a capture sees them, innermost first (its own stack,
/// with the frames parked under its running generators spliced in), or nullptr. GIL held.
/// Hot: read on every capture.
const NativeLink *innermost() noexcept;

}  // namespace callsite::native
