// tracking/frame_access.h — the caller, code and offset of a frame object, per CPython version.
#pragma once
#include <Python.h>
#include <frameobject.h>

namespace callsite::tracking::detail {

// Borrowed results: the profile function runs while these frames execute, and a running frame
// keeps its code object and its caller's frame object alive.
#if PY_VERSION_HEX < 0x030B0000
// 3.10: PyFrameObject is public (cpython/frameobject.h); f_lasti counts code units.
inline PyCodeObject *frame_code(PyFrameObject *f) noexcept { return f->f_code; }
inline PyFrameObject *frame_back(PyFrameObject *f) noexcept { return f->f_back; }
inline int frame_lasti(PyFrameObject *f) noexcept {
  return f->f_lasti < 0 ? -1 : f->f_lasti * int(sizeof(_Py_CODEUNIT));
}
#else
// 3.11+: the accessors return new references; PyFrame_GetBack creates the caller's frame
// object if it has none, and the interpreter frame owns it from then on (frame_obj).
inline PyCodeObject *frame_code(PyFrameObject *f) noexcept {
  PyCodeObject *code = PyFrame_GetCode(f);
  Py_DECREF(code);
  return code;
}
inline PyFrameObject *frame_back(PyFrameObject *f) noexcept {
  PyFrameObject *back = PyFrame_GetBack(f);
  Py_XDECREF(back);
  return back;
}
inline int frame_lasti(PyFrameObject *f) noexcept { return PyFrame_GetLasti(f); }
#endif

}  // namespace callsite::tracking::detail
