// tracking/hooks_stub.cc — placeholder until tracked windows land (issue 5).
#include "tracking/hooks.h"

namespace locus::tracking {

PyObject *window_traceback(std::size_t, std::size_t, PyObject *) noexcept {
  PyErr_SetString(PyExc_RuntimeError,
                  "capture(source='window') needs tracking, which is not implemented yet");
  return nullptr;
}

}  // namespace locus::tracking
