// python/daemon_exit.h — daemon threads stopped by interpreter finalization inside callsite.
#pragma once
#include <Python.h>

namespace callsite::python {

/// Before 3.14, a daemon thread that wants the GIL back after finalization started is ended
/// with pthread_exit (PyThread_exit_thread), a forced unwind through every C++ frame on its
/// stack. Code that runs Python callbacks (rules compiling, reifiers) is not noexcept, so
/// the unwind passes; where it still meets a noexcept frame (deep render/filter paths that
/// may reify, and other extensions' code) std::terminate would abort the whole process. This
/// installs a terminate handler that, only for a thread other than the main one while the
/// interpreter is finalizing, parks the thread forever instead (what 3.14 does with daemon
/// threads: the process then exits normally); anything else goes to the previous handler.
/// Idempotent; GIL held.
bool install_daemon_exit_guard() noexcept;

}  // namespace callsite::python
