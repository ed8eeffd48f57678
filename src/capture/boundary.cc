// capture/boundary.cc — the kernel boundary's context variable, its open count and the
// resolution of a kernel to the code object its frames run.
#include "capture/boundary.h"

#include "core/compat.h"

namespace callsite {

namespace detail {

std::atomic<std::size_t> open_boundaries{0};

namespace {

PyObject *boundary_var = nullptr;  // contextvars.ContextVar("callsite.boundary"), immortal here

bool ensure_var() noexcept {
  if (!boundary_var) boundary_var = PyContextVar_New("callsite.boundary", nullptr);
  return boundary_var != nullptr;
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

std::size_t outer_boundary_cut(PyObject *chain, const RawFrame *frames, std::size_t n) noexcept {
  if (!chain) return 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!frames[i].is_python()) continue;
    for (PyObject *b = PyTuple_GET_ITEM(chain, 1); b != Py_None; b = PyTuple_GET_ITEM(b, 1))
      if (frames[i].code() == static_cast<void *>(PyTuple_GET_ITEM(b, 0))) return i + 1;
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

PyObject *open_boundary(PyObject *kernel) noexcept {
  if (!detail::ensure_var()) return nullptr;
  PyObject *code = kernel_code(kernel, "kernel");
  if (!code) return nullptr;
  PyObject *outer = nullptr;
  if (PyContextVar_Get(detail::boundary_var, Py_None, &outer) < 0) {
    Py_DECREF(code);
    return nullptr;
  }
  PyObject *chain = PyTuple_Pack(2, code, outer);
  Py_DECREF(code);
  Py_DECREF(outer);
  if (!chain) return nullptr;
  PyObject *token = PyContextVar_Set(detail::boundary_var, chain);
  Py_DECREF(chain);
  if (token) detail::open_boundaries.fetch_add(1, std::memory_order_relaxed);
  return token;
}

int close_boundary(PyObject *token) noexcept {
  if (!detail::boundary_var) {
    PyErr_SetString(PyExc_RuntimeError, "no callsite boundary was opened");
    return -1;
  }
  if (PyContextVar_Reset(detail::boundary_var, token) < 0) return -1;
  // Only a successful reset closes one: a count too high costs a context read, never a wrong
  // walk.
  detail::open_boundaries.fetch_sub(1, std::memory_order_relaxed);
  return 0;
}

}  // namespace callsite
