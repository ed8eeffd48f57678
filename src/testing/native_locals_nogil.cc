// testing/native_locals_nogil.cc — NativeFrameWithLocals on threads without the GIL.
#include "testing/native_locals_nogil.h"

#include <atomic>
#include <exception>
#include <thread>
#include <vector>

#include "callsite/api.h"
#include "core/compat.h"

namespace callsite::testing {
namespace {

int reify_nogil(const Executable *, std::uintptr_t state, NativeLocation *out) noexcept {
  out->filename = "nogil.dsl";
  out->lineno = int(state % 1000) + 1;
  return 0;
}

const Executable kWorker{"worker", "jit", &reify_nogil};
const Executable kMain{"main", "jit", &reify_nogil};

PyObject *state_variables(const Executable *, std::uintptr_t state, void *name) {
  return Py_BuildValue("{s:K}", static_cast<const char *>(name), (unsigned long long)state);
}

}  // namespace

PyObject *frames_with_locals_without_gil(std::size_t threads, std::size_t pushes,
                                         PyObject *reader) noexcept {
  static char worker_name[] = "worker", main_name[] = "main";
  std::atomic<std::size_t> pushed{0}, running{0};
  std::vector<std::thread> workers;
  bool all_true = true;
  PyObject *error = nullptr;
  {
    NativeFrameWithLocals frame(kMain, 7, nullptr, &state_variables, main_name);
    Py_BEGIN_ALLOW_THREADS
    for (std::size_t t = 0; t < threads; ++t) {
      ++running;
      try {
        workers.emplace_back([&] {
          for (std::size_t i = 0; i < pushes; ++i) {
            NativeFrameWithLocals inner(kWorker, i, nullptr, &state_variables, worker_name);
            pushed.fetch_add(1, std::memory_order_relaxed);
          }
          --running;
        });
      } catch (const std::exception &) {  // the thread could not be started: fewer of them
        --running;
        break;
      }
    }
    Py_END_ALLOW_THREADS
    while (running.load() && !error) {
      PyObject *result = PyObject_CallNoArgs(reader);
      if (!result) error = compat::take_raised_exception();
      else all_true = all_true && result == Py_True;
      Py_XDECREF(result);
    }
    Py_BEGIN_ALLOW_THREADS
    for (std::thread &w : workers) w.join();
    Py_END_ALLOW_THREADS
  }
  if (error) {
    compat::restore_raised_exception(error);
    return nullptr;
  }
  return Py_BuildValue("(nO)", Py_ssize_t(pushed.load()), all_true ? Py_True : Py_False);
}

}  // namespace callsite::testing
