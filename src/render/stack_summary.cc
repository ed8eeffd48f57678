// render/stack_summary.cc — frames as the standard library's traceback objects, and their text:
// CPython's StackSummary.format, or the same lines written here for the common case.
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


PyObject *named_summary(const NamedFrame *frames, std::size_t count) {
  PyObject *frame_cls = traceback_attr("FrameSummary");
  PyObject *stack_cls = frame_cls ? traceback_attr("StackSummary") : nullptr;
  PyObject *kwargs = stack_cls ? Py_BuildValue("{s:O}", "lookup_line", Py_False) : nullptr;
  PyObject *list = kwargs ? PyList_New(Py_ssize_t(count)) : nullptr, *result = nullptr;
  if (list) {
    std::size_t i = 0;
    for (; i < count; ++i) {
      const NamedFrame &f = frames[i];
      PyObject *line = int_or_none(f.line);
      PyObject *args = line ? PyTuple_Pack(3, f.file, line, f.name) : nullptr;
      Py_XDECREF(line);
      PyObject *summary = args ? PyObject_Call(frame_cls, args, kwargs) : nullptr;  // any code
      Py_XDECREF(args);
      if (!summary) break;
      PyList_SET_ITEM(list, Py_ssize_t(i), summary);
    }
    if (i == count) result = PyObject_CallMethod(stack_cls, "from_list", "O", list);
    Py_DECREF(list);
  }
  Py_XDECREF(kwargs);
  Py_XDECREF(stack_cls);
  Py_XDECREF(frame_cls);
  return result;
}

PyObject *format_named(const NamedFrame *frames, std::size_t n) {
  PyObject *summary = named_summary(frames, n);
  PyObject *lines = summary ? PyObject_CallMethod(summary, "format", nullptr) : nullptr;
  Py_XDECREF(summary);
  if (!lines) return nullptr;
  PyObject *empty = PyUnicode_FromStringAndSize("", 0);
  PyObject *text = empty ? PyUnicode_Join(empty, lines) : nullptr;
  Py_XDECREF(empty);
  Py_DECREF(lines);
  return text;
}

namespace {

/// Whether `c` ends a line for str.splitlines (textwrap.indent splits there on 3.13+) or is a
/// newline (3.13+ partitions the line there): such a line is CPython's to format.
bool breaks_line(Py_UCS4 c) noexcept {
  switch (c) {
    case '\n': case '\r': case 0x0b: case 0x0c: case 0x1c: case 0x1d: case 0x1e: case 0x85:
    case 0x2028: case 0x2029:
      return true;
    default:
      return false;
  }
}

}  // namespace

PyObject *named_frame_lines(const NamedFrame &f, PyObject *entry, bool *unusual) noexcept {
  // Interned once: one interpreter (the module refuses subinterpreters).
  static PyObject *strip = PyUnicode_InternFromString("strip");
  static PyObject *stdin_prefix = PyUnicode_InternFromString("<stdin");
  *unusual = true;
  if (!strip || !stdin_prefix || f.line < 0) return nullptr;
  // 3.13 writes "<stdin>-N" files as "<stdin>", 3.14+ "<stdin-N>".
  const Py_ssize_t stdin_match = PyUnicode_Tailmatch(f.file, stdin_prefix, 0, PY_SSIZE_T_MAX, -1);
  if (stdin_match != 0) {
    if (stdin_match < 0) *unusual = false;
    return nullptr;
  }
  // linecache.getline reads the entry's lines (linecache's shape: size, mtime, lines, fullname).
  if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 4) return nullptr;
  PyObject *lines = PyTuple_GET_ITEM(entry, 2);
  if (!PyList_CheckExact(lines)) return nullptr;
  PyObject *source = nullptr;
  if (f.line >= 1 && f.line <= PyList_GET_SIZE(lines)) {
    source = PyList_GET_ITEM(lines, f.line - 1);
    if (!PyUnicode_CheckExact(source)) return nullptr;
  }
  PyObject *stripped = nullptr;
  if (source) {
    Py_INCREF(source);  // the list is linecache's: held while str.strip (C code) runs
    stripped = PyObject_CallMethodNoArgs(source, strip);
    Py_DECREF(source);
    if (!stripped) {
      *unusual = false;
      return nullptr;
    }
    const Py_ssize_t length = PyUnicode_GET_LENGTH(stripped);
    const int kind = PyUnicode_KIND(stripped);
    const void *data = PyUnicode_DATA(stripped);
    for (Py_ssize_t i = 0; i < length; ++i) {
      if (breaks_line(PyUnicode_READ(kind, data, i))) {
        Py_DECREF(stripped);
        return nullptr;
      }
    }
  }
  *unusual = false;
  PyObject *text;
  if (stripped && PyUnicode_GET_LENGTH(stripped) > 0)
    text = PyUnicode_FromFormat("  File \"%U\", line %d, in %U\n    %U\n", f.file, f.line, f.name,
                                stripped);
  else
    text = PyUnicode_FromFormat("  File \"%U\", line %d, in %U\n", f.file, f.line, f.name);
  Py_XDECREF(stripped);
  return text;
}

bool repeats_cut_short(const NamedFrame *frames, std::size_t n) noexcept {
  auto equal_str = [](PyObject *a, PyObject *b) {
    return a == b || (PyUnicode_GET_LENGTH(a) == PyUnicode_GET_LENGTH(b) &&
                      PyUnicode_Compare(a, b) == 0);
  };
  std::size_t run = 1;
  for (std::size_t i = 1; i < n; ++i) {
    const NamedFrame &a = frames[i - 1], &b = frames[i];
    if (a.line == b.line && equal_str(a.file, b.file) && equal_str(a.name, b.name)) {
      if (++run > 3) return true;
    } else {
      run = 1;
    }
  }
  return false;
}

}  // namespace callsite::detail
