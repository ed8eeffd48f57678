// python/daemon_exit.cc — parks daemon threads whose finalization unwind meets a noexcept frame.
#include "python/daemon_exit.h"

#include "core/compat.h"

#include <pythread.h>
#include <unistd.h>

#include <exception>

#include "core/compat.h"

namespace callsite::python {
namespace {

std::terminate_handler previous = nullptr;
unsigned long main_thread_ident = 0;
bool installed = false;

// Reads only runtime flags and the thread id: no thread state needed (this thread has none).
[[noreturn]] void on_terminate() {
  if (compat::is_finalizing() && PyThread_get_thread_ident() != main_thread_ident) {
    for (;;) pause();  // the process exit ends it; no Python or C++ state is touched again
  }
  if (previous) previous();
  std::abort();
}

}  // namespace

bool install_daemon_exit_guard() {
  if (installed) return true;
  // threading.main_thread(): the thread that runs Py_FinalizeEx in an ordinary program. Read
  // only if threading is already loaded (importing it costs more than the rest of callsite's
  // import); otherwise this thread, the same guess threading makes when it is first imported
  // before 3.13.
  main_thread_ident = PyThread_get_thread_ident();
  PyObject *name = PyUnicode_FromString("threading");
  PyObject *threading = name ? PyImport_GetModule(name) : nullptr;  // no error when absent
  Py_XDECREF(name);
  if (threading) {
    PyObject *main = PyObject_CallMethod(threading, "main_thread", nullptr);
    PyObject *ident = main ? PyObject_GetAttrString(main, "ident") : nullptr;
    if (ident && PyLong_Check(ident)) main_thread_ident = PyLong_AsUnsignedLong(ident);
    Py_XDECREF(ident);
    Py_XDECREF(main);
    Py_DECREF(threading);
  }
  if (PyErr_Occurred()) return false;
  previous = std::set_terminate(on_terminate);
  installed = true;
  return true;
}

}  // namespace callsite::python
