// filter/hooks_stub.cc — placeholder until filters land (issue 4).
#include "filter/hooks.h"

namespace locus::filter {

PyObject *filtered_traceback(PyObject *, const RawFrame *, std::size_t, std::size_t) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "capture(filter=...) is not implemented yet");
  return nullptr;
}
int keeps(PyObject *, PyCodeObject *) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "filters are not implemented yet");
  return -1;
}
std::size_t filter_limit(PyObject *) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "filters are not implemented yet");
  return SIZE_MAX;
}

}  // namespace locus::filter
