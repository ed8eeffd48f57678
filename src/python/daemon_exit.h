// python/daemon_exit.h — daemon threads stopped by interpreter finalization inside callsite.
#pragma once
#include <Python.h>

namespace callsite::python {

/// Before 3.14, a daemon thread that wants the GIL back after finalization started is ended
/// with pthread_exit (PyThread_exit_thread), a forced unwind through every C++ frame on its
/// stack. Every path from a Python entry point to a call that runs Python code is free of
/// noexcept, so the unwind passes (docs/robustness.md). This handler is the backstop for
/// what that cannot cover: a Python finalizer run while a noexcept frame is on the stack (a
/// collection started by an allocation on 3.10/3.11, the release of a user object in a C++
/// destructor, nanobind's noexcept dispatcher, other extensions' noexcept code). Only for a
/// thread other than the main one while the interpreter is finalizing, it parks the thread
/// forever instead of aborting (what 3.14 does with daemon threads: the process then exits
/// normally); anything else goes to the previous handler. Idempotent; GIL held.
bool install_daemon_exit_guard();

}  // namespace callsite::python
