// native/greenlets.h — native frames belong to the greenlet that pushed them.
#pragma once
#include <Python.h>

namespace callsite::native {

/// A greenlet switch swaps the Python frame chain (and the C stack) of a thread, but not its
/// shadow stack: frames pushed in one greenlet would show in another's captures and pop out
/// of order. So on every switch, greenlet's per-thread trace hook (greenlet.settrace, chained
/// to any trace function already set) saves the outgoing greenlet's shadow-stack top and
/// reifier guard (reifier_guard.h) and restores the incoming one's. push/pop are unchanged
/// (no per-push cost).
///
/// Installs the hook on the calling thread when greenlet is imported and it is not there
/// yet. Cheap when there is nothing to do (compares the size of sys.modules). `force`: look
/// again even if sys.modules did not change. False with a Python error. GIL held.
bool track_greenlets(bool force = false) noexcept;

}  // namespace callsite::native
