// native/guest_module.cc — the guest module of a file: a namespace shaped like a module's
// (what linecache.lazycache, warnings, sentry_sdk's context lines, PyImport_Import read from a
// frame's globals), a loader holding the guest's text when it has one, and a function object
// over them that a visible frame runs as (its f_funcobj: sys._getframemodulename names the
// guest; a frame object taken over at the pop holds it, and with it the globals and builtins
// the frame borrowed).
#include "native/guest_module.h"

#include "core/compat.h"
#include "native/executable.h"

namespace callsite::native {
namespace {

PyObject *functions = nullptr;  // {(filename, source or None): function}; cold paths only
PyObject *code_cache = nullptr;  // {(filename, name, line): empty code}; bounded below
// Entries the cache holds at most: a guest program has a bounded number of (function, line)
// pairs that raise, but a process may run many programs; past the bound the cache starts
// afresh (entries and frames hold their own references).
constexpr Py_ssize_t kMaxEmptyCodes = 4096;
PyObject *block_checks = nullptr;  // {(filename, line): bool}, guest_first_line's; as bounded

// loader.get_source(fullname): the text for the guest's own name, as an importlib loader
// answers for the modules it loads; ImportError for another name (linecache and sentry_sdk
// catch it). `self` is (name, text).
PyObject *get_source(PyObject *self, PyObject *fullname) {
  PyObject *name = PyTuple_GET_ITEM(self, 0);
  const int same = PyUnicode_Check(fullname) ? PyUnicode_Compare(name, fullname) : -1;
  if (same == -1 && PyErr_Occurred()) return nullptr;
  if (same == 0) return Py_NewRef(PyTuple_GET_ITEM(self, 1));
  return PyErr_Format(PyExc_ImportError, "callsite: this loader holds the source of %R only, not %R",
                      name, fullname);
}

PyMethodDef get_source_def = {
    "get_source", get_source, METH_O,
    "get_source(fullname, /)\n--\n\nthe guest file's text, held in memory by callsite."};

// module.name(*args, **kwargs), importing the module (a cold path); a new reference or
// nullptr + error. `args`/`kwargs` may be nullptr after an earlier failure (then nullptr).
PyObject *call_from(const char *module_name, const char *name, PyObject *args,
                    PyObject *kwargs) {
  PyObject *module = args && kwargs ? PyImport_ImportModule(module_name) : nullptr;
  PyObject *callable = module ? PyObject_GetAttrString(module, name) : nullptr;
  PyObject *result = callable ? PyObject_Call(callable, args, kwargs) : nullptr;
  Py_XDECREF(callable);
  Py_XDECREF(module);
  Py_XDECREF(args);
  Py_XDECREF(kwargs);
  return result;
}

// types.SimpleNamespace(get_source=...) over (filename, text).
PyObject *new_loader(PyObject *filename, PyObject *source) {
  PyObject *bound = PyTuple_Pack(2, filename, source);
  PyObject *method = bound ? PyCFunction_New(&get_source_def, bound) : nullptr;
  Py_XDECREF(bound);
  PyObject *kwargs = method ? Py_BuildValue("{s:O}", "get_source", method) : nullptr;
  Py_XDECREF(method);
  return call_from("types", "SimpleNamespace", PyTuple_New(0), kwargs);
}

// importlib.machinery.ModuleSpec(filename, loader, origin=filename).
PyObject *new_spec(PyObject *filename, PyObject *loader) {
  return call_from("importlib.machinery", "ModuleSpec", PyTuple_Pack(2, filename, loader),
                   Py_BuildValue("{s:O}", "origin", filename));
}

// The module-shaped namespace of a guest file. Without a text it has no __spec__ at all:
// linecache (3.15 _bless_my_loader) warns about a __spec__ without a loader, and a module
// without __spec__ and __loader__ is one it has nothing to ask.
PyObject *new_globals(PyObject *filename, PyObject *source) {
  PyObject *builtins_module = PyImport_ImportModule("builtins");
  PyObject *builtins = builtins_module ? PyModule_GetDict(builtins_module) : nullptr;
  PyObject *loader = !builtins ? nullptr : source ? new_loader(filename, source) : Py_NewRef(Py_None);
  PyObject *spec = !loader ? nullptr : source ? new_spec(filename, loader) : nullptr;
  PyObject *globals =
      loader && (spec || !source)
          ? Py_BuildValue("{s:O,s:O,s:O,s:O,s:O,s:O}", "__name__", filename, "__doc__", Py_None,
                          "__package__", Py_None, "__loader__", loader, "__file__", filename,
                          "__builtins__", builtins)
          : nullptr;
  if (globals && spec && PyDict_SetItemString(globals, "__spec__", spec) < 0) Py_CLEAR(globals);
  Py_XDECREF(spec);
  Py_XDECREF(loader);
  Py_XDECREF(builtins_module);
  return globals;
}

PyObject *new_function(PyObject *filename, PyObject *source) {
  static PyObject *module_name = PyUnicode_InternFromString("<module>");
  if (!module_name) return nullptr;
  PyObject *code = empty_code(filename, module_name, kGuestFirstLine);
  PyObject *globals = code ? new_globals(filename, source) : nullptr;
  PyObject *function = globals ? PyFunction_New(code, globals) : nullptr;
  Py_XDECREF(globals);
  Py_XDECREF(code);
  return function;
}

// linecache.lazycache(filename, globals): linecache.getline(filename, n) then asks the guest's
// loader for the text (a file of that name on disk still comes first). With `replace`, an
// entry linecache holds for that name from a loader (lazy, or read without a modification
// time: an earlier text of the same name) goes first; a file's entry stays. False + error.
bool register_in_linecache(PyObject *filename, PyObject *globals, bool replace) {
  PyObject *linecache = PyImport_ImportModule("linecache");
  PyObject *cache = linecache ? PyObject_GetAttrString(linecache, "cache") : nullptr;
  bool ok = cache != nullptr;
  if (ok && replace && PyDict_Check(cache)) {
    PyObject *entry = Py_XNewRef(PyDict_GetItemWithError(cache, filename));
    const bool from_loader = entry && PyTuple_Check(entry) &&
                             (PyTuple_GET_SIZE(entry) == 1 ||
                              (PyTuple_GET_SIZE(entry) == 4 && PyTuple_GET_ITEM(entry, 1) == Py_None));
    if (from_loader && PyDict_DelItem(cache, filename) < 0) PyErr_Clear();  // gone meanwhile
    Py_XDECREF(entry);
    ok = !PyErr_Occurred();
  }
  PyObject *done = ok ? PyObject_CallMethod(linecache, "lazycache", "OO", filename, globals)
                      : nullptr;
  Py_XDECREF(cache);
  Py_XDECREF(linecache);
  Py_XDECREF(done);
  return done != nullptr;
}

// The text of the executable's own file, or nullptr (borrowed from the executable).
PyObject *source_for(const Executable *exe, PyObject *filename) {
  ExecutableObject *owner = python_owned(exe);
  if (!owner || !owner->source || !PyUnicode_Check(filename)) return nullptr;
  if (!owner->source_file) owner->source_file = Py_NewRef(filename);  // the first file named
  const int same = PyUnicode_Compare(owner->source_file, filename);
  if (same == -1 && PyErr_Occurred()) PyErr_Clear();  // exact str both: cannot fail
  return same == 0 ? owner->source : nullptr;
}

// Lines from a frame's line to the end of its file that guest_first_line asks inspect.getblock
// to tokenize at most on 3.13, where getblock tokenizes all of them (no def/class/lambda
// ends a guest block), on a raise, once per (file, line). Past it the frame's code gets no
// block. 3.14+ getblock stops at the end of the first logical line.
constexpr Py_ssize_t kMaxBlockCheckLines = 2000;

// Whether inspect.getblock(linecache.getlines(filename, globals)[line - 1:]) returns a block
// without raising (starting with the frame's line then), for at most kMaxBlockCheckLines
// lines before 3.14. 1, 0, or -1 + error for what is not an Exception (an interrupt:
// it propagates).
int inspect_block_is_line(PyObject *filename, PyObject *globals, int line) {
  PyObject *lines = call_from("linecache", "getlines", PyTuple_Pack(2, filename, globals),
                              PyDict_New());
  const Py_ssize_t count = lines && PyList_Check(lines) ? PyList_GET_SIZE(lines) : 0;
  PyObject *rest = line <= count && (compat::kInspectBlockEndsAtLogicalLine ||
                                     count - (line - 1) <= kMaxBlockCheckLines)
                       ? PyList_GetSlice(lines, line - 1, count)
                       : nullptr;
  Py_XDECREF(lines);
  PyObject *block = rest ? call_from("inspect", "getblock", PyTuple_Pack(1, rest), PyDict_New())
                         : nullptr;
  Py_XDECREF(rest);
  const int found = block && PyList_Check(block) && PyList_GET_SIZE(block) >= 1;
  Py_XDECREF(block);
  if (PyErr_Occurred()) {
    if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
    PyErr_Clear();
  }
  return found;
}

}  // namespace

PyObject *empty_code(PyObject *filename, PyObject *name, int first_line) {
  if (!code_cache && !(code_cache = PyDict_New())) return nullptr;
  const int firstlineno = first_line > 0 ? first_line : kGuestFirstLine;
  PyObject *number = PyLong_FromLong(firstlineno);
  PyObject *key = number ? PyTuple_Pack(3, filename, name, number) : nullptr;
  Py_XDECREF(number);
  if (!key) return nullptr;
  PyObject *code = PyDict_GetItemWithError(code_cache, key);
  if (code || PyErr_Occurred()) {
    Py_DECREF(key);
    return Py_XNewRef(code);
  }
  // The names go in as str objects (code.replace below), not as PyCode_NewEmpty's C
  // strings, which would cut them at an embedded NUL where captures do not. PyCode_NewEmpty
  // maps its instructions to its first line; on 3.11+ the location table is replaced by "no
  // location" entries (PY_CODE_LOCATION_INFO_NONE = 15, 8 code units at most each), so that
  // co_positions() yields None and tracebacks print the per-entry tb_lineno instead.
  code = reinterpret_cast<PyObject *>(PyCode_NewEmpty("", "", firstlineno));
  if (code) {
    PyObject *bytecode = PyObject_GetAttrString(code, "co_code");
    Py_ssize_t units = bytecode ? PyBytes_GET_SIZE(bytecode) / 2 : -1;
    Py_XDECREF(bytecode);
    PyObject *table = units >= 0 ? PyBytes_FromStringAndSize(nullptr, (units + 7) / 8) : nullptr;
    if (table) {
      char *p = PyBytes_AS_STRING(table);
      for (; units > 0; units -= 8) *p++ = char(0x80 | (15 << 3) | ((units < 8 ? units : 8) - 1));
    }
    PyObject *replace = table ? PyObject_GetAttrString(code, "replace") : nullptr;
    PyObject *args = replace ? PyTuple_New(0) : nullptr;
    PyObject *kwargs =
        !args ? nullptr
        : compat::kHasColumns
            ? Py_BuildValue("{s:O,s:O,s:O,s:O}", "co_linetable", table, "co_filename",
                            filename, "co_name", name, "co_qualname", name)
            : Py_BuildValue("{s:O,s:O}", "co_filename", filename, "co_name", name);
    PyObject *replaced = kwargs ? PyObject_Call(replace, args, kwargs) : nullptr;
    Py_XDECREF(kwargs);
    Py_XDECREF(args);
    Py_XDECREF(replace);
    Py_XDECREF(table);
    Py_SETREF(code, replaced);
  }
  if (code && PyDict_GET_SIZE(code_cache) >= kMaxEmptyCodes) PyDict_Clear(code_cache);
  if (code && PyDict_SetItem(code_cache, key, code) < 0) Py_CLEAR(code);
  Py_DECREF(key);
  return code;
}

int guest_first_line(PyObject *filename, PyObject *globals, int line) {
  if (!compat::kInspectBlockAtFirstLine || line <= 0) return kGuestFirstLine;
  if (!block_checks && !(block_checks = PyDict_New())) return -1;
  PyObject *number = PyLong_FromLong(line);
  PyObject *key = number ? PyTuple_Pack(2, filename, number) : nullptr;
  Py_XDECREF(number);
  if (!key) return -1;
  PyObject *known = PyDict_GetItemWithError(block_checks, key);
  int found = known              ? known == Py_True
              : PyErr_Occurred() ? -1
                                 : inspect_block_is_line(filename, globals, line);
  if (!known && found >= 0) {
    if (PyDict_GET_SIZE(block_checks) >= kMaxEmptyCodes) PyDict_Clear(block_checks);
    if (PyDict_SetItem(block_checks, key, found ? Py_True : Py_False) < 0) found = -1;
  }
  Py_DECREF(key);
  return found < 0 ? -1 : found ? line : kGuestFirstLine;
}

PyObject *guest_function(PyObject *filename, PyObject *source) {
  if (!functions && !(functions = PyDict_New())) return nullptr;
  PyObject *key = PyTuple_Pack(2, filename, source ? source : Py_None);
  if (!key) return nullptr;
  PyObject *function = Py_XNewRef(PyDict_GetItemWithError(functions, key));
  if (!function && !PyErr_Occurred()) {
    function = new_function(filename, source);
    if (function && PyDict_SetItem(functions, key, function) < 0) Py_CLEAR(function);
    // A text held in memory is known to linecache from now on (inspect, a bare getline).
    if (function && source &&
        !register_in_linecache(filename, PyFunction_GET_GLOBALS(function), true))
      Py_CLEAR(function);
  }
  Py_DECREF(key);
  return function;
}

PyObject *guest_function_of(const Executable *exe, PyObject *filename) {
  PyObject *source = Py_XNewRef(source_for(exe, filename));
  PyObject *function = guest_function(filename, source);
  Py_XDECREF(source);
  return function;
}

void release_guest_function(PyObject *function) noexcept {
  if (!function) return;
  // Only the cache and this reference left: the entry goes (a later frame of that file makes
  // a new one). Finding it is a scan, on an executable's death.
  if (functions && Py_REFCNT(function) == 2) {
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(functions, &pos, &key, &value)) {
      if (value != function) continue;
      PyObject *exc = compat::take_raised_exception();
      if (PyDict_DelItem(functions, key) < 0) PyErr_Clear();
      if (exc) compat::restore_raised_exception(exc);
      break;
    }
  }
  Py_DECREF(function);
}

void release_guest_source(const Executable *exe) noexcept {
  ExecutableObject *owner = python_owned(exe);
  if (!functions || !owner || !owner->source || !owner->source_file) return;
  PyObject *exc = compat::take_raised_exception();
  PyObject *key = PyTuple_Pack(2, owner->source_file, owner->source);
  PyObject *function = key ? Py_XNewRef(PyDict_GetItemWithError(functions, key)) : nullptr;
  Py_XDECREF(key);
  PyErr_Clear();
  release_guest_function(function);  // the cache's entry goes if only it holds the function
  if (exc) compat::restore_raised_exception(exc);
}

bool prime_linecache(const Executable *exe, PyObject *filename) {
  if (!source_for(exe, filename)) return true;
  PyObject *function = guest_function_of(exe, filename);
  if (!function) return false;
  const bool done = register_in_linecache(filename, PyFunction_GET_GLOBALS(function), false);
  Py_DECREF(function);
  return done;
}

}  // namespace callsite::native
