// python/filter_type.cc — callsite.Filter's Python type: construction, rule editing,
// queries (the state and the decision fast path are in src/filter/).
#include "python/filter_type.h"

#include <frameobject.h>
#include <structmember.h>

#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "core/args.h"
#include "filter/filter.h"
#include "filter/decisions.h"
#include "filter/scan_kept.h"
#include "python/frame_type.h"

namespace callsite::detail {
namespace {

constexpr std::size_t kDefaultLimit = 10;  // MLIR's TracebackLoc default frame limit

// A rule change: fresh generation (every cached decision of the old one is now stale) and an empty
// filename cache.
void changed(FilterObject *f) {
  f->generation = next_filter_generation();
  PyDict_Clear(f->filename_cache);
}

// The default exclusions: generated `_<dialect>_ops_gen.py` modules (each registers itself as
// an exclusion in MLIR) and callsite's own package directory (known once callsite._callsite has its
// __file__; absent when embedded without the package). A new reference; computed once.
PyObject *default_patterns() {
  static PyObject *cached = nullptr;
  if (cached) return Py_NewRef(cached);
  PyObject *list = Py_BuildValue("[s]", "_ops_gen\\.py$");
  if (!list) return nullptr;
  PyObject *name = PyUnicode_FromString("callsite._callsite");
  PyObject *self = name ? PyImport_GetModule(name) : nullptr;
  Py_XDECREF(name);
  PyObject *file = self ? PyObject_GetAttrString(self, "__file__") : nullptr;
  Py_XDECREF(self);
  if (!file) {
    PyErr_Clear();
    return list;  // not cached: the package may not be imported yet
  }
  PyObject *os_path = PyImport_ImportModule("os.path");
  PyObject *dir = os_path ? PyObject_CallMethod(os_path, "dirname", "O", file) : nullptr;
  PyObject *joined = dir ? PyObject_CallMethod(os_path, "join", "Os", dir, "") : nullptr;
  PyObject *pattern = joined ? literal_prefix_pattern(joined) : nullptr;
  const bool ok = pattern && PyList_Append(list, pattern) == 0;
  for (PyObject *o : {pattern, joined, dir, os_path, file}) Py_XDECREF(o);
  if (!ok) {
    Py_DECREF(list);
    return nullptr;
  }
  cached = Py_NewRef(list);
  return list;
}

bool add_default_exclusions(Rules &rules) {
  PyObject *patterns = default_patterns();
  if (!patterns) return false;
  bool ok = true;
  for (Py_ssize_t i = 0; ok && i < PyList_GET_SIZE(patterns); ++i)
    ok = rules.add(RuleKind::exclude, PyList_GET_ITEM(patterns, i)) >= 0;
  Py_DECREF(patterns);
  return ok;
}

// Adds every rule of `rules` (None, a str, an re.Pattern, or an iterable of those).
bool add_all(FilterObject *f, RuleKind kind, PyObject *rules) {
  if (!rules || rules == Py_None) return true;
  // A lone str or re.Pattern is one rule; anything not iterable gets add()'s TypeError.
  if (PyUnicode_Check(rules) || !PyObject_HasAttrString(rules, "__iter__"))
    return f->rules->add(kind, rules) >= 0;
  PyObject *it = PyObject_GetIter(rules);
  if (!it) return false;
  while (PyObject *rule = PyIter_Next(it)) {
    const int r = f->rules->add(kind, rule);
    Py_DECREF(rule);
    if (r < 0) {
      Py_DECREF(it);
      return false;
    }
  }
  Py_DECREF(it);
  return !PyErr_Occurred();
}

FilterObject *alloc(PyTypeObject *type) {
  auto *f = reinterpret_cast<FilterObject *>(type->tp_alloc(type, 0));
  if (!f) return nullptr;
  f->rules = new (std::nothrow) Rules();
  f->filename_cache = PyDict_New();
  f->limit = kDefaultLimit;
  f->generation = next_filter_generation();
  if (!f->rules || !f->filename_cache) {
    Py_DECREF(f);
    if (!PyErr_Occurred()) PyErr_NoMemory();
    return nullptr;
  }
  return f;
}

PyObject *filter_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"include", "exclude", "limit", "default_exclusions", nullptr};
  PyObject *include = nullptr, *exclude = nullptr, *limit = nullptr;
  int defaults = 1;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OOO$p:Filter", const_cast<char **>(kwlist),
                                   &include, &exclude, &limit, &defaults))
    return nullptr;
  FilterObject *f = alloc(type);
  if (!f) return nullptr;
  if ((limit && !parse_count(limit, "limit", SIZE_MAX, &f->limit)) ||
      (defaults && !add_default_exclusions(*f->rules)) ||
      !add_all(f, RuleKind::exclude, exclude) || !add_all(f, RuleKind::include, include)) {
    Py_DECREF(f);
    return nullptr;
  }
  return reinterpret_cast<PyObject *>(f);
}

void filter_dealloc(PyObject *self) {
  FilterObject *f = as_filter(self);
  if (f->weakreflist) PyObject_ClearWeakRefs(self);
  delete f->rules;
  Py_XDECREF(f->filename_cache);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject *filter_repr(PyObject *self) {
  FilterObject *f = as_filter(self);
  PyObject *inc = f->rules->sources(RuleKind::include);
  PyObject *exc = f->rules->sources(RuleKind::exclude);
  PyObject *text = nullptr;
  if (inc && exc) {
    if (f->limit == SIZE_MAX)
      text = PyUnicode_FromFormat("callsite.Filter(include=%R, exclude=%R, limit=None, "
                                  "default_exclusions=False)",
                                  inc, exc);
    else
      text = PyUnicode_FromFormat("callsite.Filter(include=%R, exclude=%R, limit=%zu, "
                                  "default_exclusions=False)",
                                  inc, exc, f->limit);
  }
  Py_XDECREF(inc);
  Py_XDECREF(exc);
  return text;
}

// --- rule editing -------------------------------------------------------------------------

PyObject *edit_result(FilterObject *f, int r) {
  if (r < 0) return nullptr;
  if (r > 0) changed(f);
  Py_RETURN_NONE;
}

PyObject *add_include(PyObject *self, PyObject *rule) {
  return edit_result(as_filter(self), as_filter(self)->rules->add(RuleKind::include, rule));
}
PyObject *add_exclude(PyObject *self, PyObject *rule) {
  return edit_result(as_filter(self), as_filter(self)->rules->add(RuleKind::exclude, rule));
}

// The path a file or directory rule matches: os.fspath(path) with "~" expanded, made
// absolute against the current directory (co_filename of an imported module is absolute, so
// a relative rule would never match); a directory gets a trailing separator. Pseudo-filenames
// ("<string>", "<frozen ...>") are kept as given.
PyObject *rule_path(const char *method, PyObject *path, bool dir) {
  if (!PyUnicode_Check(path) && !PyObject_HasAttrString(path, "__fspath__")) {
    PyErr_Format(PyExc_TypeError,
                 "callsite.Filter.%s(): path must be a str or os.PathLike, not %.200s", method,
                 Py_TYPE(path)->tp_name);
    return nullptr;
  }
  PyObject *text = PyOS_FSPath(path);
  if (text && !PyUnicode_Check(text)) {
    PyErr_Format(PyExc_TypeError,
                 "callsite.Filter.%s(): path must be a str or os.PathLike, not %.200s "
                 "(os.fspath() gave %.200s)",
                 method, Py_TYPE(path)->tp_name, Py_TYPE(text)->tp_name);
    Py_CLEAR(text);
  }
  if (!text) return nullptr;
  if (PyUnicode_GET_LENGTH(text) == 0) {
    Py_DECREF(text);
    PyErr_Format(PyExc_ValueError, "callsite.Filter.%s(): path must not be empty", method);
    return nullptr;
  }
  if (PyUnicode_READ_CHAR(text, 0) == '<') return text;
  PyObject *os_path = PyImport_ImportModule("os.path");
  PyObject *expanded = os_path ? PyObject_CallMethod(os_path, "expanduser", "O", text) : nullptr;
  PyObject *absolute = expanded ? PyObject_CallMethod(os_path, "abspath", "O", expanded) : nullptr;
  PyObject *result = absolute && dir ? PyObject_CallMethod(os_path, "join", "Os", absolute, "")
                                     : Py_XNewRef(absolute);
  for (PyObject *o : {absolute, expanded, os_path, text}) Py_XDECREF(o);
  return result;
}

PyObject *add_prefix(PyObject *self, PyObject *path, RuleKind kind, bool dir) {
  const char *method = kind == RuleKind::include ? (dir ? "include_dir" : "include_file")
                                                 : (dir ? "exclude_dir" : "exclude_file");
  PyObject *prefix = rule_path(method, path, dir);
  if (!prefix) return nullptr;
  PyObject *pattern = literal_prefix_pattern(prefix);
  Py_DECREF(prefix);
  if (!pattern) return nullptr;
  const int r = as_filter(self)->rules->add(kind, pattern);
  Py_DECREF(pattern);
  return edit_result(as_filter(self), r);
}

PyObject *include_file(PyObject *self, PyObject *p) { return add_prefix(self, p, RuleKind::include, false); }
PyObject *exclude_file(PyObject *self, PyObject *p) { return add_prefix(self, p, RuleKind::exclude, false); }
PyObject *include_dir(PyObject *self, PyObject *p) { return add_prefix(self, p, RuleKind::include, true); }
PyObject *exclude_dir(PyObject *self, PyObject *p) { return add_prefix(self, p, RuleKind::exclude, true); }

PyObject *remove_rule(PyObject *self, PyObject *source) {
  const int r = as_filter(self)->rules->remove(source);
  if (r < 0) return nullptr;
  if (r > 0) changed(as_filter(self));
  return PyBool_FromLong(r);
}

PyObject *clear_rules(PyObject *self, PyObject *) {
  as_filter(self)->rules->clear();
  changed(as_filter(self));
  Py_RETURN_NONE;
}

PyObject *copy_filter(PyObject *self, PyObject *) {
  FilterObject *f = alloc(Py_TYPE(self));
  if (!f) return nullptr;
  f->rules->copy_from(*as_filter(self)->rules);
  f->limit = as_filter(self)->limit;
  return reinterpret_cast<PyObject *>(f);
}

// --- queries --------------------------------------------------------------------------------

// keeps(x): x a code object, function, frame, callsite.Frame or filename.
PyObject *keeps_py(PyObject *self, PyObject *x) {
  FilterObject *f = as_filter(self);
  int r;
  if (PyCode_Check(x)) {
    r = keeps(f, reinterpret_cast<PyCodeObject *>(x),
                   code_info(reinterpret_cast<PyCodeObject *>(x)));
  } else if (PyUnicode_Check(x)) {
    r = keeps(f, x);
  } else if (PyFunction_Check(x)) {
    // Borrowed: keeps holds the code object across the decision, which may run code
    // (a collection's finalizers) that assigns x.__code__.
    PyObject *code = PyFunction_GetCode(x);
    r = keeps(f, reinterpret_cast<PyCodeObject *>(code),
                   code_info(reinterpret_cast<PyCodeObject *>(code)));
  } else if (PyFrame_Check(x)) {
    PyCodeObject *code = PyFrame_GetCode(reinterpret_cast<PyFrameObject *>(x));
    r = keeps(f, code, code_info(code));
    Py_DECREF(code);
  } else if (PyObject_TypeCheck(x, frame_type)) {
    r = keeps(f, frame_raw(x));
  } else {
    PyErr_Format(PyExc_TypeError,
                 "Filter.keeps() expects a code object, function, frame, callsite.Frame or "
                 "filename str, not %.200s",
                 Py_TYPE(x)->tp_name);
    return nullptr;
  }
  if (r < 0) return nullptr;
  return PyBool_FromLong(r);
}

// first_user_frame(skip=0): the innermost kept frame of the caller's stack, or None. Walks
// growing prefixes of the stack and stops at the first kept frame: a user frame near the top
// of a deep stack costs a short walk, not the whole stack.
PyObject *first_user_frame(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames) {
  static const char *const names[] = {"skip"};
  PyObject *skip_arg = nullptr;
  if (!bind_fastcall_args("first_user_frame", names, 1, 1, args, nargs, kwnames, &skip_arg))
    return nullptr;
  size_t skip = 0;
  if (skip_arg && !parse_count(skip_arg, "skip", 0, &skip)) return nullptr;
  // The kernel boundary's frame is the user's whatever the rules say (scan_kept counts it).
  StackWalk stack(skip, kFirstPrefix);
  size_t kept = 0;
  const size_t end = scan_kept(stack, as_filter(self), 1, &kept);
  if (end == SIZE_MAX) return nullptr;
  if (!kept) Py_RETURN_NONE;
  return new_frame(stack.data()[end - 1]);
}

PyObject *apply_py(PyObject *self, PyObject *tb) {
  if (!is_traceback(tb)) {
    PyErr_Format(PyExc_TypeError, "Filter.apply() expects a callsite.Traceback, not %.200s",
                 Py_TYPE(tb)->tp_name);
    return nullptr;
  }
  return filtered_traceback(self, traceback_frames(tb), traceback_size(tb), SIZE_MAX,
                            traceback_end(tb));
}

PyObject *default_py(PyObject *, PyObject *) { return Py_XNewRef(callsite::default_filter()); }

// --- properties -----------------------------------------------------------------------------

PyObject *get_include(PyObject *self, void *) {
  return as_filter(self)->rules->sources(RuleKind::include);
}
PyObject *get_exclude(PyObject *self, void *) {
  return as_filter(self)->rules->sources(RuleKind::exclude);
}
PyObject *get_limit(PyObject *self, void *) {
  const size_t limit = as_filter(self)->limit;
  if (limit == SIZE_MAX) Py_RETURN_NONE;
  return PyLong_FromSize_t(limit);
}
int set_limit(PyObject *self, PyObject *value, void *) {
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete Filter.limit");
    return -1;
  }
  return parse_count(value, "limit", SIZE_MAX, &as_filter(self)->limit) ? 0 : -1;
}
PyObject *get_generation(PyObject *self, void *) {
  return PyLong_FromUnsignedLongLong(as_filter(self)->generation);
}

PyMethodDef filter_methods[] = {
    {"add_include", add_include, METH_O,
     "add_include($self, pattern, /)\n--\n\nkeep frames whose co_filename matches (re.search); wins over "
     "every exclude rule. Removes the same pattern from the exclude rules."},
    {"add_exclude", add_exclude, METH_O,
     "add_exclude($self, pattern, /)\n--\n\ndrop frames whose co_filename matches, unless an include rule "
     "matches. Removes the same pattern from the include rules."},
    {"include_file", include_file, METH_O,
     "include_file($self, path, /)\n--\n\nas MLIR's register_traceback_file_inclusion: the literal prefix "
     "'^' + re.escape(path)."},
    {"exclude_file", exclude_file, METH_O,
     "exclude_file($self, path, /)\n--\n\nas MLIR's register_traceback_file_exclusion."},
    {"include_dir", include_dir, METH_O,
     "include_dir($self, path, /)\n--\n\nevery file under the directory (literal prefix path + os.sep)."},
    {"exclude_dir", exclude_dir, METH_O, "exclude_dir($self, path, /)\n--\n\nevery file under the directory."},
    {"remove", remove_rule, METH_O, "remove($self, pattern, /)\n--\n\ndrops the rule from both kinds."},
    {"clear", clear_rules, METH_NOARGS, "clear($self, /)\n--\n\ndrops every rule (the defaults too)."},
    {"copy", copy_filter, METH_NOARGS, "copy($self, /)\n--\n\nsame rules and limit."},
    {"keeps", keeps_py, METH_O,
     "keeps($self, x, /)\n--\n\nx a code object, function, frame, callsite.Frame or filename."},
    {"first_user_frame",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(first_user_frame)),
     METH_FASTCALL | METH_KEYWORDS,
     "first_user_frame($self, skip=0)\n--\n\nthe innermost kept frame of the caller's "
     "stack (skip drops that many innermost frames first). Stops at the first kept frame."},
    {"apply", apply_py, METH_O,
     "apply($self, traceback, /)\n--\n\nthe kept frames, at most limit of them."},
    {"default", default_py, METH_NOARGS | METH_CLASS,
     "default($type, /)\n--\n\nthe process-wide default (used when no filter is given)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef filter_getset[] = {
    {"include", get_include, nullptr, "tuple[str, ...]: include patterns, in order", nullptr},
    {"exclude", get_exclude, nullptr, "tuple[str, ...]: exclude patterns, in order", nullptr},
    {"limit", get_limit, set_limit, "int | None: at most this many kept frames", nullptr},
    {"generation", get_generation, nullptr,
     "int: changes whenever the rules change (cached decisions carry it)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMemberDef filter_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(FilterObject, weakreflist), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyType_Slot filter_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "Filter(include=(), exclude=(), limit=10, *, default_exclusions=True)\n"
                    "--\n\n"
                    "Which frames are the user's, with MLIR's semantics: a frame is kept when "
                    "its co_filename matches an include rule (re.search), or else matches no "
                    "exclude rule. limit counts kept frames (None: no limit). The default "
                    "exclusions are generated ``*_ops_gen.py`` modules and callsite's own files.\n\n"
                    R"doc(Raises:
    TypeError: a rule is not a str or ``re.Pattern``, as in
        ``callsite.Filter(include=3)``.
    ValueError: a rule is not a valid regular expression, as in
        ``callsite.Filter(exclude="(")``.
    ValueError: ``limit`` is negative, as in ``callsite.Filter(limit=-1)``.
    TypeError: ``keeps`` given something it cannot name a file of, as in
        ``callsite.Filter().keeps(3)``.
    TypeError: ``apply`` given something else than a Traceback, as in
        ``callsite.Filter().apply([])``.

Example:
    ::

        import callsite

        f = callsite.Filter(limit=3)              # default exclusions: *_ops_gen.py, callsite itself
        f.exclude_dir("/opt/my_dsl")              # the framework is not the user
        f.include_file("/opt/my_dsl/examples.py") # ...except its examples
        here = callsite.capture()
        print(f.keeps(here[0]), f.keeps("/opt/my_dsl/core.py"))   # True False
        print(len(f.apply(here)) <= 3, f.first_user_frame().lineno)
)doc")},
    {Py_tp_new, reinterpret_cast<void *>(filter_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(filter_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(filter_repr)},
    {Py_tp_methods, filter_methods},
    {Py_tp_getset, filter_getset},
    {Py_tp_members, filter_members},
    {0, nullptr}};

PyObject *make_default_filter() {
  PyObject *empty = PyTuple_New(0);
  PyObject *filter = empty ? filter_new(filter_type, empty, nullptr) : nullptr;
  Py_XDECREF(empty);
  return filter;
}

PyType_Spec filter_spec = {"callsite.Filter", int(sizeof(FilterObject)), 0,
                           Py_TPFLAGS_DEFAULT, filter_slots};

}  // namespace

PyTypeObject *init_filter_type() noexcept {
  if (filter_type) return filter_type;
  filter_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&filter_spec));
  // filter/ makes the default Filter at first use, with the type that lives here.
  if (filter_type) set_default_filter_maker(&make_default_filter);
  return filter_type;
}

}  // namespace callsite::detail
