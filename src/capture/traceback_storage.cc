// capture/traceback_storage.cc — Traceback storage: the accessors other subsystems use and the
// references of native entries (made and recycled in capture/traceback_pool.cc).
#include "capture/traceback_storage.h"

#include "core/frame_refs.h"

namespace callsite::detail {

PyTypeObject *traceback_type = nullptr;

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

}  // namespace callsite
