// filter/rules.cc — compiling and searching the rules through Python's `re` (a cold path: the
// decisions are cached per code object, so a regex runs once per code object and rule set).
#include "filter/rules.h"

namespace callsite::detail {
namespace {

PyObject *re_compile = nullptr, *re_escape = nullptr, *re_pattern_type = nullptr;
PyObject *re_error = nullptr, *search_name = nullptr;

const char *kind_name(RuleKind kind) { return kind == RuleKind::include ? "include" : "exclude"; }

void release(std::vector<Rule> &rules) {
  std::vector<Rule> old;
  old.swap(rules);  // empty before anything is released (a pattern's weakref callback may run)
  for (Rule &r : old) {
    Py_DECREF(r.source);
    Py_DECREF(r.pattern);
  }
}

// `s` (a str) as an exact str, new reference. Rules keep and compare exact str only: comparing
// a str subclass would run its __eq__, user code that may edit the very vector being searched.
PyObject *exact_str(PyObject *s) {
  return PyUnicode_CheckExact(s) ? Py_NewRef(s) : PyUnicode_FromObject(s);
}

// Index of the rule whose source equals `source` (an exact str), or -1. Runs no Python code.
Py_ssize_t find(const std::vector<Rule> &rules, PyObject *source) {
  for (size_t i = 0; i < rules.size(); ++i)
    if (PyUnicode_Compare(rules[i].source, source) == 0) return Py_ssize_t(i);
  return -1;
}

bool erase(std::vector<Rule> &rules, PyObject *source, bool *erased) {
  const Py_ssize_t i = find(rules, source);
  *erased = i >= 0;
  if (i >= 0) {
    const Rule r = rules[size_t(i)];
    rules.erase(rules.begin() + i);  // consistent before anything is released
    Py_DECREF(r.source);
    Py_DECREF(r.pattern);
  }
  return true;
}

// Compiles a str (or takes an re.Pattern as is); errors name the kind, pattern and reason.
bool compile(RuleKind kind, PyObject *rule, Rule *out) {
  if (!init_rules()) return false;
  if (PyObject_TypeCheck(rule, reinterpret_cast<PyTypeObject *>(re_pattern_type))) {
    PyObject *source = PyObject_GetAttrString(rule, "pattern");
    if (!source) return false;
    if (!PyUnicode_Check(source)) {
      Py_DECREF(source);
      PyErr_Format(PyExc_TypeError,
                   "callsite.Filter: %s rules must be str patterns (co_filename is a str), not a "
                   "bytes pattern",
                   kind_name(kind));
      return false;
    }
    Py_SETREF(source, exact_str(source));
    if (!source) return false;
    *out = {source, Py_NewRef(rule)};
    return true;
  }
  if (!PyUnicode_Check(rule)) {
    PyErr_Format(PyExc_TypeError,
                 "callsite.Filter: %s rules must be str (regular expressions) or re.Pattern, "
                 "not %.200s",
                 kind_name(kind), Py_TYPE(rule)->tp_name);
    return false;
  }
  PyObject *source = exact_str(rule);  // re.compile would hash a subclass (its __hash__)
  if (!source) return false;
  PyObject *pattern = PyObject_CallOneArg(re_compile, source);
  if (!pattern) {
    Py_DECREF(source);
    if (PyErr_ExceptionMatches(re_error)) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      PyErr_Format(PyExc_ValueError, "callsite.Filter: bad %s pattern %R: %S", kind_name(kind),
                   rule, value ? value : Py_None);
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
    }
    return false;
  }
  *out = {source, pattern};
  return true;
}

// By index, each pattern held across its search: a search allocates, so a collection may run
// finalizers that edit these very rules.
int search_any(const std::vector<Rule> &rules, PyObject *filename) {
  for (std::size_t i = 0; i < rules.size(); ++i) {
    PyObject *pattern = Py_NewRef(rules[i].pattern);
    PyObject *m = PyObject_CallMethodOneArg(pattern, search_name, filename);
    Py_DECREF(pattern);
    if (!m) return -1;
    const bool hit = m != Py_None;
    Py_DECREF(m);
    if (hit) return 1;
  }
  return 0;
}

PyObject *to_tuple(const std::vector<Rule> &rules) {
  PyObject *t = PyTuple_New(Py_ssize_t(rules.size()));
  if (!t) return nullptr;
  for (size_t i = 0; i < rules.size(); ++i)
    PyTuple_SET_ITEM(t, Py_ssize_t(i), Py_NewRef(rules[i].source));
  return t;
}

}  // namespace

Rules::~Rules() noexcept(false) { clear(); }

void Rules::clear() {
  release(include_);
  release(exclude_);
}

int Rules::add(RuleKind kind, PyObject *rule) {
  Rule r;
  if (!compile(kind, rule, &r)) return -1;
  std::vector<Rule> &mine = kind == RuleKind::include ? include_ : exclude_;
  std::vector<Rule> &other = kind == RuleKind::include ? exclude_ : include_;
  bool erased = false;
  const Py_ssize_t existing = find(mine, r.source);
  erase(other, r.source, &erased);
  if (existing >= 0) {
    Py_DECREF(r.source);
    Py_DECREF(r.pattern);
    return erased ? 1 : 0;
  }
  mine.push_back(r);
  return 1;
}

int Rules::remove(PyObject *source) {
  if (!PyUnicode_Check(source)) {
    PyErr_Format(PyExc_TypeError, "callsite.Filter.remove() expects a str pattern, not %.200s",
                 Py_TYPE(source)->tp_name);
    return -1;
  }
  PyObject *exact = exact_str(source);
  if (!exact) return -1;
  bool a = false, b = false;
  erase(include_, exact, &a);
  erase(exclude_, exact, &b);
  Py_DECREF(exact);
  return a || b;
}

int Rules::keeps(PyObject *filename) const {
  const int included = search_any(include_, filename);
  if (included != 0) return included;  // 1, or -1 on error
  const int excluded = search_any(exclude_, filename);
  return excluded < 0 ? -1 : !excluded;
}

PyObject *Rules::sources(RuleKind kind) const noexcept {
  return to_tuple(kind == RuleKind::include ? include_ : exclude_);
}

void Rules::copy_from(const Rules &other) noexcept {
  for (const Rule &r : other.include_) include_.push_back({Py_NewRef(r.source), Py_NewRef(r.pattern)});
  for (const Rule &r : other.exclude_) exclude_.push_back({Py_NewRef(r.source), Py_NewRef(r.pattern)});
}

PyObject *literal_prefix_pattern(PyObject *path) {
  if (!init_rules()) return nullptr;
  if (!PyUnicode_Check(path)) {
    PyErr_Format(PyExc_TypeError, "callsite.Filter: a file or directory path must be a str, not %.200s",
                 Py_TYPE(path)->tp_name);
    return nullptr;
  }
  PyObject *escaped = PyObject_CallOneArg(re_escape, path);
  if (!escaped) return nullptr;
  PyObject *pattern = PyUnicode_FromFormat("^%U", escaped);
  Py_DECREF(escaped);
  return pattern;
}

bool init_rules() {
  if (re_compile) return true;
  PyObject *re = PyImport_ImportModule("re");
  if (!re) return false;
  re_compile = PyObject_GetAttrString(re, "compile");
  re_escape = PyObject_GetAttrString(re, "escape");
  re_pattern_type = PyObject_GetAttrString(re, "Pattern");
  re_error = PyObject_GetAttrString(re, "error");
  Py_DECREF(re);
  search_name = PyUnicode_InternFromString("search");
  return re_compile && re_escape && re_pattern_type && re_error && search_name;
}

}  // namespace callsite::detail
