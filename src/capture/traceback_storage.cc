// capture/traceback_storage.cc — Traceback storage: filled from walked or copied frames,
// released and recycled on dealloc; the accessors other subsystems use.
#include "capture/traceback_storage.h"

#include <cstring>

#include "capture/traceback_pool.h"
#include "core/frame_refs.h"

namespace callsite::detail {

PyTypeObject *traceback_type = nullptr;

void traceback_dealloc(PyObject *self) {
  TracebackObject *tb = reinterpret_cast<TracebackObject *>(self);
  const Py_ssize_t n = Py_SIZE(tb);
  if (tb->may_have_native)
    for (Py_ssize_t i = 0; i < n; ++i)
      if (!tb->frames[i].is_python()) release(tb->frames[i].executable());
  release_code_refs(tb->frames, std::size_t(n));
  PyTypeObject *type = Py_TYPE(self);
  give_traceback_storage(tb);
  Py_DECREF(type);  // heap type instances own a reference to their type
}

PyObject *adopt_traceback(const RawFrame *frames, Py_ssize_t n, bool may_have_native) noexcept {
  TracebackObject *tb = take_traceback_storage(n);
  if (!tb) {
    release_code_refs(frames, std::size_t(n));
    return nullptr;
  }
  if (n) std::memcpy(tb->frames, frames, size_t(n) * sizeof(RawFrame));
  if (may_have_native) retain_native_entries(tb);
  return reinterpret_cast<PyObject *>(tb);
}

void retain_native_entries(TracebackObject *tb) noexcept {
  tb->may_have_native = true;
  for (Py_ssize_t i = 0, n = Py_SIZE(tb); i < n; ++i)
    if (!tb->frames[i].is_python()) retain(tb->frames[i].executable());
}

}  // namespace callsite::detail

namespace callsite {

bool is_traceback(PyObject *obj) noexcept {
  return PyObject_TypeCheck(obj, detail::traceback_type);
}
std::size_t traceback_size(PyObject *tb) noexcept { return std::size_t(Py_SIZE(tb)); }
const RawFrame *traceback_frames(PyObject *tb) noexcept {
  return reinterpret_cast<detail::TracebackObject *>(tb)->frames;
}
WalkEnd traceback_end(PyObject *tb) noexcept {
  return reinterpret_cast<detail::TracebackObject *>(tb)->end;
}
PyObject *new_traceback(const RawFrame *frames, std::size_t n) noexcept {
  detail::TracebackObject *tb = detail::take_traceback_storage(Py_ssize_t(n));
  if (!tb) return nullptr;
  if (n) std::memcpy(tb->frames, frames, n * sizeof(RawFrame));  // an empty vector's data() may be null
  for (std::size_t i = 0; i < n; ++i) {
    detail::retain(frames[i]);
    tb->may_have_native |= !frames[i].is_python();
  }
  return reinterpret_cast<PyObject *>(tb);
}

}  // namespace callsite
