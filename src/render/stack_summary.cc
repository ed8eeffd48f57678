// render/stack_summary.cc — Traceback as the standard library's traceback objects, and as dicts.
#include "render/stack_summary.h"

#include "callsite/symbolize.h"
#include "callsite/traceback.h"

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
#if PY_VERSION_HEX >= 0x030E0000
  // 3.14's FrameSummary also takes the code object (`_code`, as extract_stack passes it): the
  // lines of code registered with linecache (`python -c`, the REPL) are found through it.
  PyObject *kwargs = Py_BuildValue("{s:O,s:N,s:N,s:N,s:O}", "lookup_line", Py_False, "end_lineno",
                                   int_or_none(info.end_lineno), "colno",
                                   int_or_none(info.colno), "end_colno",
                                   int_or_none(info.end_colno), "_code",
                                   info.code ? info.code : Py_None);
#elif PY_VERSION_HEX >= 0x030B0000
  PyObject *kwargs = Py_BuildValue("{s:O,s:N,s:N,s:N}", "lookup_line", Py_False, "end_lineno",
                                   int_or_none(info.end_lineno), "colno",
                                   int_or_none(info.colno), "end_colno",
                                   int_or_none(info.end_colno));
#else
  PyObject *kwargs = Py_BuildValue("{s:O}", "lookup_line", Py_False);
#endif
  PyObject *summary = kwargs ? PyObject_Call(cls, args, kwargs) : nullptr;
  Py_DECREF(args);
  Py_XDECREF(kwargs);
  return summary;
}

}  // namespace

PyObject *traceback_as_stack_summary(PyObject *tb) noexcept {
  PyObject *frame_cls = traceback_attr("FrameSummary");
  PyObject *stack_cls = frame_cls ? traceback_attr("StackSummary") : nullptr;
  if (!stack_cls) {
    Py_XDECREF(frame_cls);
    return nullptr;
  }
  const Py_ssize_t n = Py_ssize_t(traceback_size(tb));
  const RawFrame *frames = traceback_frames(tb);
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

PyObject *traceback_format(PyObject *tb) noexcept {
  PyObject *summary = traceback_as_stack_summary(tb);
  if (!summary) return nullptr;
  PyObject *lines = PyObject_CallMethod(summary, "format", nullptr);
  Py_DECREF(summary);
  return lines;
}

PyObject *frame_to_dict(PyObject *frame) noexcept {
  static const char *const kFields[] = {"kind",   "filename",   "name",  "qualname", "lineno",
                                        "end_lineno", "colno", "end_colno", "lasti", "state"};
  PyObject *dict = PyDict_New();
  if (!dict) return nullptr;
  for (const char *field : kFields) {
    PyObject *value = PyObject_GetAttrString(frame, field);
    if (!value || PyDict_SetItemString(dict, field, value) < 0) {
      Py_XDECREF(value);
      Py_DECREF(dict);
      return nullptr;
    }
    Py_DECREF(value);
  }
  return dict;
}

PyObject *traceback_to_list(PyObject *tb) noexcept {
  const Py_ssize_t n = PySequence_Size(tb);
  if (n < 0) return nullptr;
  PyObject *list = PyList_New(n);
  if (!list) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *frame = PySequence_GetItem(tb, i);
    PyObject *dict = frame ? frame_to_dict(frame) : nullptr;
    Py_XDECREF(frame);
    if (!dict) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, dict);
  }
  return list;
}

}  // namespace callsite::detail
