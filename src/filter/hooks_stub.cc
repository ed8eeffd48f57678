// filter/hooks_stub.cc — placeholder until filters land (issue 4).
#include "filter/hooks.h"

namespace locus::filter {

PyObject *filtered_traceback(PyObject *, const RawFrame *, std::size_t, std::size_t) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "capture(filter=...) is not implemented yet");
  return nullptr;
}

}  // namespace locus::filter
