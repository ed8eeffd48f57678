// capture/boundary.cc — the kernel boundary's context variable, its open count, the chain of
// open boundaries, and how a frame is recognised as a boundary's kernel.
#include "capture/boundary.h"

#include "core/compat.h"
#include "symbolize/code_info.h"

namespace callsite {

namespace detail {

PyTypeObject *boundary_type = nullptr;
std::atomic<std::size_t> open_boundaries{0};

namespace {

PyObject *boundary_var = nullptr;  // contextvars.ContextVar("callsite.boundary"), immortal here

bool ensure_var() noexcept {
  if (!boundary_var) boundary_var = PyContextVar_New("callsite.boundary", nullptr);
  return boundary_var != nullptr;
}

// The last line of the kernel's own code (its line table), computed once per boundary. No
// Python code runs (the table is read in C); an error decoding it leaves the first line.
int last_line(BoundaryObject *b) noexcept {
  if (b->last_line) return b->last_line;
  auto *code = reinterpret_cast<PyCodeObject *>(b->code);
  int last = code->co_firstlineno;
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  Position unused;
  CodeInfo *info = code_info(code);
  if (info && code_position(code, 0, &unused) && info->decoded)
    for (const PositionRange &r : info->positions) {
      if (r.position.lineno > last) last = r.position.lineno;
      if (r.position.end_lineno > last) last = r.position.end_lineno;
    }
  PyErr_Clear();
  PyErr_Restore(type, value, traceback);
  return b->last_line = last;
}

// Equal str objects (code objects' names and file names are exact str: no Python code runs).
inline bool same_text(PyObject *a, PyObject *b) noexcept {
  return a == b || (PyUnicode_GET_LENGTH(a) == PyUnicode_GET_LENGTH(b) && PyUnicode_Compare(a, b) == 0);
}

// Whether `code` was compiled from the kernel's own source. A DSL that parses the kernel and
// compiles a rewritten function (ast + compile, or exec of generated text) keeps its file
// name, line numbers (so that its tracebacks point at the user's source) and name; dropping
// the decorator lines moves co_firstlineno down within the kernel's lines. The line compare
// comes first: it fails for almost every other frame.
bool same_origin(BoundaryObject *b, PyCodeObject *code) noexcept {
  auto *kernel = reinterpret_cast<PyCodeObject *>(b->code);
  if (code->co_firstlineno < kernel->co_firstlineno) return false;
  if (code->co_firstlineno > last_line(b)) return false;
  return same_text(code->co_name, kernel->co_name) &&
         same_text(code->co_filename, kernel->co_filename);
}

inline bool runs_kernel(BoundaryObject *b, PyCodeObject *code) noexcept {
  return code == reinterpret_cast<PyCodeObject *>(b->code) ||
         code == reinterpret_cast<PyCodeObject *>(b->rewritten) || same_origin(b, code);
}

}  // namespace

PyObject *boundary_chain_slow() noexcept {
  if (!boundary_var) return nullptr;
  PyObject *chain = nullptr;
  if (PyContextVar_Get(boundary_var, nullptr, &chain) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  if (!chain) return nullptr;
  // The current context holds the value; nothing here runs Python code until it is used.
  Py_DECREF(chain);
  return chain == Py_None ? nullptr : chain;
}

}  // namespace detail

using detail::as_boundary;
using detail::BoundaryObject;

std::size_t boundary_cut(PyObject *chain, const RawFrame *frames, std::size_t n,
                         bool complete) noexcept {
  if (!chain) return 0;
  // The innermost boundary first: its kernel as a DSL rewrote it. Once recognised, later walks
  // stop at that code by identity (innermost_boundary()); the kernel's own code stays held by
  // the boundary, so nothing is released here.
  BoundaryObject *inner = as_boundary(PyTuple_GET_ITEM(chain, 0));
  for (std::size_t i = 0; i < n; ++i) {
    if (!frames[i].is_python()) continue;
    auto *code = static_cast<PyCodeObject *>(frames[i].code());
    if (!detail::runs_kernel(inner, code)) continue;
    if (!inner->rewritten && code != reinterpret_cast<PyCodeObject *>(inner->code))
      inner->rewritten = Py_NewRef(reinterpret_cast<PyObject *>(code));
    return i + 1;
  }
  if (!complete) return 0;
  // Its kernel is not running: the innermost frame running any enclosing boundary's.
  for (std::size_t i = 0; i < n; ++i) {
    if (!frames[i].is_python()) continue;
    auto *code = static_cast<PyCodeObject *>(frames[i].code());
    for (PyObject *node = PyTuple_GET_ITEM(chain, 1); node != Py_None;
         node = PyTuple_GET_ITEM(node, 1))
      if (detail::runs_kernel(as_boundary(PyTuple_GET_ITEM(node, 0)), code)) return i + 1;
  }
  return 0;
}

PyObject *kernel_code(PyObject *kernel, const char *argument) noexcept {
  PyObject *obj = Py_NewRef(kernel);
  // inspect.unwrap's rule, bounded as it is: a decorator made with functools.wraps stands for
  // the function it wraps, whose frames are the ones the kernel's ops come from.
  for (int depth = 0; depth < 100; ++depth) {
    if (PyCode_Check(obj)) return obj;
    PyObject *next = nullptr;
    if (PyFunction_Check(obj)) {
      if (compat::get_optional_attr(obj, "__wrapped__", &next) < 0) break;
      if (!next) next = Py_NewRef(PyFunction_GET_CODE(obj));
    } else if (PyMethod_Check(obj)) {
      next = Py_NewRef(PyMethod_GET_FUNCTION(obj));
    } else {
      static constexpr const char *kUnwrapping[] = {"__wrapped__", "__func__", "__code__"};
      for (const char *name : kUnwrapping) {
        if (compat::get_optional_attr(obj, name, &next) < 0) break;
        if (next) break;
      }
      if (PyErr_Occurred()) break;
    }
    Py_DECREF(obj);
    if (!next) {
      PyErr_Format(PyExc_TypeError,
                   "%s must be a function, method or code object (or wrap one through "
                   "__wrapped__), not %.200s",
                   argument, Py_TYPE(kernel)->tp_name);
      return nullptr;
    }
    obj = next;
  }
  if (!PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "%s: its __wrapped__ chain does not end (more than 100 levels)",
                 argument);
  Py_DECREF(obj);
  return nullptr;
}

PyObject *new_boundary(PyObject *kernel, const char *argument) noexcept {
  if (!detail::boundary_type) {
    PyErr_SetString(PyExc_RuntimeError, "callsite.boundary is not initialised");
    return nullptr;
  }
  PyObject *code = kernel_code(kernel, argument);
  if (!code) return nullptr;
  PyTypeObject *type = detail::boundary_type;
  auto *b = reinterpret_cast<BoundaryObject *>(type->tp_alloc(type, 0));
  if (!b) {
    Py_DECREF(code);
    return nullptr;
  }
  b->code = code;
  b->rewritten = nullptr;
  b->last_line = 0;
  b->entered = false;
  return reinterpret_cast<PyObject *>(b);
}

int enter_boundary(PyObject *boundary) noexcept {
  BoundaryObject *b = as_boundary(boundary);
  if (b->entered) {
    PyErr_SetString(PyExc_RuntimeError,
                    "this callsite.boundary is already open; nest a new callsite.boundary(...) "
                    "instead of entering the same one twice");
    return -1;
  }
  if (!detail::ensure_var()) return -1;
  PyObject *outer = nullptr;
  if (PyContextVar_Get(detail::boundary_var, Py_None, &outer) < 0) return -1;
  PyObject *chain = PyTuple_Pack(2, boundary, outer);
  Py_DECREF(outer);
  if (!chain) return -1;
  PyObject *token = PyContextVar_Set(detail::boundary_var, chain);
  Py_DECREF(chain);
  if (!token) return -1;
  Py_DECREF(token);
  b->entered = true;
  detail::open_boundaries.fetch_add(1, std::memory_order_relaxed);
  return 0;
}

int exit_boundary(PyObject *boundary) noexcept {
  BoundaryObject *b = as_boundary(boundary);
  if (!b->entered || !detail::boundary_var) {
    PyErr_SetString(PyExc_RuntimeError, "this callsite.boundary is not open");
    return -1;
  }
  PyObject *chain = nullptr;  // held: building the new chain allocates, which may run a GC
  if (PyContextVar_Get(detail::boundary_var, Py_None, &chain) < 0) return -1;
  // The boundaries opened after this one and still open (generators or coroutines suspended
  // inside their `with`, closed in another order) stay, in their order, above its outer one.
  constexpr int kMaxAbove = 256;
  PyObject *above[kMaxAbove];
  int depth = 0;
  PyObject *node = chain;
  while (node != Py_None && PyTuple_GET_ITEM(node, 0) != boundary && depth < kMaxAbove) {
    above[depth++] = PyTuple_GET_ITEM(node, 0);
    node = PyTuple_GET_ITEM(node, 1);
  }
  if (node == Py_None || PyTuple_GET_ITEM(node, 0) != boundary) {
    Py_DECREF(chain);
    if (node == Py_None)
      PyErr_SetString(PyExc_RuntimeError,
                      "this callsite.boundary is not open in the calling context: it was opened "
                      "in another thread or asyncio task (close it there)");
    else
      PyErr_Format(PyExc_RuntimeError,
                   "callsite.boundary: more than %d boundaries are open inside this one",
                   kMaxAbove);
    return -1;
  }
  PyObject *rest = Py_NewRef(PyTuple_GET_ITEM(node, 1));
  while (rest && depth > 0) {
    PyObject *rebuilt = PyTuple_Pack(2, above[--depth], rest);
    Py_DECREF(rest);
    rest = rebuilt;
  }
  PyObject *token = rest ? PyContextVar_Set(detail::boundary_var, rest) : nullptr;
  Py_XDECREF(rest);
  Py_DECREF(chain);
  if (!token) return -1;
  Py_DECREF(token);
  b->entered = false;
  detail::open_boundaries.fetch_sub(1, std::memory_order_relaxed);
  // No walk is using the rewritten kernel's code now; the next `with` learns it again.
  Py_CLEAR(b->rewritten);
  return 0;
}

PyObject *open_boundary(PyObject *kernel) noexcept {
  PyObject *b = new_boundary(kernel, "kernel");
  if (b && enter_boundary(b) < 0) Py_CLEAR(b);
  return b;
}

int close_boundary(PyObject *token) noexcept {
  if (!token || !detail::is_boundary(token)) {
    PyErr_Format(PyExc_TypeError, "close_boundary(): token must be what open_boundary() returned, "
                                  "not %.200s", token ? Py_TYPE(token)->tp_name : "NULL");
    return -1;
  }
  return exit_boundary(token);
}

}  // namespace callsite
