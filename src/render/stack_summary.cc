// render/stack_summary.cc — frames as the standard library's traceback objects.
#include "render/stack_summary.h"

#include "core/compat.h"
#include "symbolize/symbolize.h"

namespace callsite::detail {
namespace {

// traceback.FrameSummary / StackSummary, imported on first use (rendering is a cold path).
PyObject *traceback_attr(const char *name) {
  PyObject *module = PyImport_ImportModule("traceback");
  if (!module) return nullptr;
  PyObject *attr = PyObject_GetAttrString(module, name);
  Py_DECREF(module);
  return attr;
}

inline PyObject *int_or_none(int v) {
  if (v < 0) Py_RETURN_NONE;
  return PyLong_FromLong(v);
}

// FrameSummary(filename, lineno, name, lookup_line=False, ...): the name is co_name, as
// extract_stack reports it; columns as co_positions() (3.11+ FrameSummary has the fields).
PyObject *frame_summary(PyObject *cls, const FrameInfo &info) {
  PyObject *lineno = int_or_none(info.lineno);
  if (!lineno) return nullptr;
  PyObject *args = Py_BuildValue("(OOO)", info.filename, lineno, info.name);
  Py_DECREF(lineno);
  if (!args) return nullptr;
  PyObject *kwargs =
      compat::kFrameSummaryTakesCode
          ? Py_BuildValue("{s:O,s:N,s:N,s:N,s:O}", "lookup_line", Py_False, "end_lineno",
                          int_or_none(info.end_lineno), "colno", int_or_none(info.colno),
                          "end_colno", int_or_none(info.end_colno), "_code",
                          info.code ? info.code : Py_None)
      : compat::kHasColumns
          ? Py_BuildValue("{s:O,s:N,s:N,s:N}", "lookup_line", Py_False, "end_lineno",
                          int_or_none(info.end_lineno), "colno", int_or_none(info.colno),
                          "end_colno", int_or_none(info.end_colno))
          : Py_BuildValue("{s:O}", "lookup_line", Py_False);
  PyObject *summary = kwargs ? PyObject_Call(cls, args, kwargs) : nullptr;
  Py_DECREF(args);
  Py_XDECREF(kwargs);
  return summary;
}

}  // namespace

PyObject *stack_summary(const RawFrame *frames, std::size_t count) noexcept {
  PyObject *frame_cls = traceback_attr("FrameSummary");
  PyObject *stack_cls = frame_cls ? traceback_attr("StackSummary") : nullptr;
  if (!stack_cls) {
    Py_XDECREF(frame_cls);
    return nullptr;
  }
  const Py_ssize_t n = Py_ssize_t(count);
  PyObject *list = PyList_New(n), *result = nullptr;
  if (list) {
    Py_ssize_t i = 0;
    for (; i < n; ++i) {
      FrameInfo info;
      PyObject *summary = symbolize(frames[i], &info) ? frame_summary(frame_cls, info) : nullptr;
      if (!summary) break;
      PyList_SET_ITEM(list, n - 1 - i, summary);  // outermost first, like extract_stack
    }
    if (i == n) result = PyObject_CallMethod(stack_cls, "from_list", "O", list);
    Py_DECREF(list);
  }
  Py_DECREF(frame_cls);
  Py_DECREF(stack_cls);
  return result;
}

PyObject *format_stack(const RawFrame *frames, std::size_t n) noexcept {
  PyObject *summary = stack_summary(frames, n);
  if (!summary) return nullptr;
  PyObject *lines = PyObject_CallMethod(summary, "format", nullptr);
  Py_DECREF(summary);
  return lines;
}

}  // namespace callsite::detail
