// render/mlir_text_stub.cc — placeholder until MLIR rendering lands (issue 4).
#include "render/mlir_text.h"

namespace locus::detail {

PyObject *traceback_to_mlir(PyObject *, PyObject *const *, Py_ssize_t, PyObject *) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "to_mlir is not implemented yet");
  return nullptr;
}
PyObject *frame_to_mlir(PyObject *) noexcept {
  PyErr_SetString(PyExc_NotImplementedError, "to_mlir is not implemented yet");
  return nullptr;
}

}  // namespace locus::detail
