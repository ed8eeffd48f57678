// render/stack_summary.cc — frames as the standard library's traceback objects.
#include "render/stack_summary.h"

#include "core/compat.h"
#include "native/guest_module.h"
#include "symbolize/source_lines.h"
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

PyObject *stack_summary(const RawFrame *frames, std::size_t count) {
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
      // A guest file held in memory (Executable(source=...)): linecache learns where its
      // lines are, as traceback's own walk does from a frame's globals. The summary holds the
      // filename; `info` may not outlive what linecache runs.
      if (!frames[i].is_python()) {
        PyObject *filename = PyObject_GetAttrString(summary, "filename");
        const bool primed = filename && native::prime_linecache(frames[i].executable(), filename);
        Py_XDECREF(filename);
        if (!primed) {
          Py_DECREF(summary);
          break;
        }
      }
      PyList_SET_ITEM(list, n - 1 - i, summary);  // outermost first, like extract_stack
    }
    if (i == n) result = PyObject_CallMethod(stack_cls, "from_list", "O", list);
    Py_DECREF(list);
  }
  Py_DECREF(frame_cls);
  Py_DECREF(stack_cls);
  return result;
}

namespace {

// Reads the files whose lines StackSummary.format() will show, through source_lines() before
// FrameSummary.line asks linecache.getline for them: the same lines, left in linecache.cache
// as linecache leaves them, without linecache's reading path. Only the frames format() reads
// a line for (a line number, and on 3.11+ an end line, as FrameSummary's line property and
// 3.13's _set_lines need), so the cache ends as format() alone would leave it. An error is
// what format() would have raised reading that file.
bool read_sources(PyObject *summary) {
  // Interned once: one interpreter (the module refuses subinterpreters).
  static PyObject *s_filename = PyUnicode_InternFromString("filename");
  static PyObject *s_lineno = PyUnicode_InternFromString("lineno");
  static PyObject *s_end_lineno = PyUnicode_InternFromString("end_lineno");
  if (!s_filename || !s_lineno || !s_end_lineno) return false;
  if (!PyList_Check(summary)) return true;
  PyObject *last = nullptr;  // consecutive frames of one file: one lookup
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(summary); ++i) {  // any code may run
    PyObject *item = Py_NewRef(PyList_GET_ITEM(summary, i));
    PyObject *filename = PyObject_GetAttr(item, s_filename);
    PyObject *lineno = filename ? PyObject_GetAttr(item, s_lineno) : nullptr;
    PyObject *end_lineno = !lineno                  ? nullptr
                           : compat::kHasColumns ? PyObject_GetAttr(item, s_end_lineno)
                                                 : Py_NewRef(Py_None);
    Py_DECREF(item);
    ok = end_lineno != nullptr;
    if (ok && filename != last && lineno != Py_None &&
        (!compat::kHasColumns || end_lineno != Py_None)) {
      PyObject *lines = source_lines(filename);
      ok = lines != nullptr;
      Py_XDECREF(lines);
      Py_XSETREF(last, Py_NewRef(filename));
    }
    Py_XDECREF(filename);
    Py_XDECREF(lineno);
    Py_XDECREF(end_lineno);
  }
  Py_XDECREF(last);
  return ok;
}

}  // namespace

PyObject *format_stack(const RawFrame *frames, std::size_t n) {
  PyObject *summary = stack_summary(frames, n);
  if (!summary) return nullptr;
  if (!read_sources(summary)) {
    Py_DECREF(summary);
    return nullptr;
  }
  PyObject *lines = PyObject_CallMethod(summary, "format", nullptr);
  Py_DECREF(summary);
  return lines;
}

}  // namespace callsite::detail
