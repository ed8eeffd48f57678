// capture/frame_sources.cc — Traceback.from_frame / from_traceback, through the public API.
#include "capture/frame_sources.h"

#include <frameobject.h>

#include <vector>

#include "capture/traceback_storage.h"
#include "core/compat.h"
#include "core/frame_refs.h"

namespace callsite::detail {

PyObject *traceback_from_frame(PyObject *frame) noexcept {
  if (!PyFrame_Check(frame)) {
    PyErr_Format(PyExc_TypeError, "from_frame() expected a frame object, got %.200s",
                 Py_TYPE(frame)->tp_name);
    return nullptr;
  }
  std::vector<RawFrame> frames;
  PyFrameObject *f = reinterpret_cast<PyFrameObject *>(frame);
  Py_INCREF(f);
  while (f) {
    PyCodeObject *code = PyFrame_GetCode(f);  // new reference; the frame keeps it alive
    frames.push_back(python_raw_frame(code, compat::frame_lasti_bytes(f)));
    Py_DECREF(code);
    PyFrameObject *back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  return callsite::new_traceback(frames.data(), frames.size());
}

PyObject *traceback_from_exception_tb(PyObject *tb) noexcept {
  if (!PyTraceBack_Check(tb)) {
    PyErr_Format(PyExc_TypeError,
                 "from_traceback() expected a traceback object (exc.__traceback__), got %.200s",
                 Py_TYPE(tb)->tp_name);
    return nullptr;
  }
  std::vector<RawFrame> frames;
  // PyTracebackObject (cpython/traceback.h) is public: tb_frame, tb_lasti (bytes), tb_next.
  for (auto *t = reinterpret_cast<PyTracebackObject *>(tb); t; t = t->tb_next) {
    PyCodeObject *code = PyFrame_GetCode(t->tb_frame);
    frames.push_back(python_raw_frame(code, t->tb_lasti));
    Py_DECREF(code);
  }
  std::vector<RawFrame> innermost_first(frames.rbegin(), frames.rend());
  return callsite::new_traceback(innermost_first.data(), innermost_first.size());
}

}  // namespace callsite::detail
