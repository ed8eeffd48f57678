// mlir/wrappers.cc — the builders wrapped (MLIR's entry points that resolve a default
// location), installed on the first scope and restored with the last.
#include "mlir/wrappers.h"

#include "mlir/bindings.h"
#include "mlir/context_cache.h"
#include "mlir/injector.h"

namespace callsite::mlir {
namespace {

// The builders wrapped, in `saved`/`installed` order.
// loc_position: where `loc` sits among the positional arguments (MainModule.cpp's nb::arg
// lists; self/cls counted).
struct Target {
  PyObject *BindingsObject::*type;
  const char *name;
  InjectorKind kind;
  Py_ssize_t loc_position;
};
constexpr Target kTargets[BindingsObject::kEntryPoints] = {
    // (self, name, opRegionSpec, operandSegmentSpecObj, resultSegmentSpecObj, results,
    //  operands, attributes, successors, regions, loc, ip)
    {&BindingsObject::opview_type, "__init__", InjectorKind::opview_init, 10},
    // (cls, results, operands, attributes, successors, regions, loc, ip)
    {&BindingsObject::opview_type, "build_generic", InjectorKind::builder, 6},
    // (name, results, operands, attributes, successors, regions, loc, ip, infer_type)
    {&BindingsObject::operation_type, "create", InjectorKind::builder, 6},
    // (loc)
    {&BindingsObject::module_type, "create", InjectorKind::builder, 0},
};

// type.__dict__[name], borrowed semantics handled by the caller (new reference or nullptr
// without error when absent).
PyObject *own_attr(PyObject *type, const char *name) {
  PyObject *dict = reinterpret_cast<PyTypeObject *>(type)->tp_dict;
  PyObject *v = dict ? PyDict_GetItemString(dict, name) : nullptr;
  return Py_XNewRef(v);
}

bool install(BindingsObject *b) {
  for (int i = 0; i < BindingsObject::kEntryPoints; ++i) {
    const Target &t = kTargets[i];
    PyObject *type = b->*t.type;
    PyObject *original = own_attr(type, t.name);
    if (!original) continue;  // older bindings without build_generic
    PyObject *wrapper = nullptr;
    if (PyObject_TypeCheck(original, &PyClassMethod_Type)) {
      PyObject *func = PyObject_GetAttrString(original, "__func__");
      PyObject *inj = func ? new_injector(t.kind, func, b, t.loc_position) : nullptr;
      wrapper = inj ? PyClassMethod_New(inj) : nullptr;
      Py_XDECREF(inj);
      Py_XDECREF(func);
    } else if (PyObject_TypeCheck(original, &PyStaticMethod_Type)) {
      PyObject *func = PyObject_GetAttrString(original, "__func__");
      PyObject *inj = func ? new_injector(t.kind, func, b, t.loc_position) : nullptr;
      wrapper = inj ? PyStaticMethod_New(inj) : nullptr;
      Py_XDECREF(inj);
      Py_XDECREF(func);
    } else {
      wrapper = new_injector(t.kind, original, b, t.loc_position);
    }
    if (!wrapper || PyObject_SetAttrString(type, t.name, wrapper) < 0) {
      Py_XDECREF(wrapper);
      Py_DECREF(original);
      return false;
    }
    Py_XSETREF(b->saved[i], original);
    Py_XSETREF(b->installed[i], wrapper);
  }
  return true;
}

bool uninstall(BindingsObject *b) {
  bool ok = true;
  for (int i = 0; i < BindingsObject::kEntryPoints; ++i) {
    if (!b->saved[i]) continue;
    PyObject *type = b->*kTargets[i].type;
    PyObject *now = own_attr(type, kTargets[i].name);
    // Restore only our own wrapper: someone who replaced it since keeps theirs.
    if (now == b->installed[i] && PyObject_SetAttrString(type, kTargets[i].name, b->saved[i]) < 0)
      ok = false;
    Py_XDECREF(now);
    Py_CLEAR(b->saved[i]);
    Py_CLEAR(b->installed[i]);
  }
  return ok;
}

}  // namespace

bool acquire_wrappers(BindingsObject *b) noexcept {
  if (b->active_scopes++ > 0) return true;
  if (install(b)) return true;
  b->active_scopes = 0;
  uninstall(b);
  return false;
}

bool release_wrappers(BindingsObject *b) noexcept {
  if (b->active_scopes == 0) {
    PyErr_SetString(PyExc_RuntimeError, "callsite.mlir: release() without acquire()");
    return false;
  }
  if (--b->active_scopes > 0) return true;
  const bool ok = uninstall(b);
  sweep();
  return ok;
}

}  // namespace callsite::mlir
