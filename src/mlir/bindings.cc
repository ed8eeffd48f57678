// mlir/bindings.cc — MlirBindings: one `ir` module's classes, and installing the wrappers.
#include "mlir/bindings.h"

#include "mlir/context_cache.h"
#include "mlir/injector.h"
#include "mlir/settings.h"

namespace callsite::mlir {

PyTypeObject *bindings_type = nullptr;

namespace {

std::vector<BindingsObject *> registry;
PyObject *str_current = nullptr;

inline BindingsObject *as_b(PyObject *o) { return reinterpret_cast<BindingsObject *>(o); }

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

PyObject *attr_or_type_error(PyObject *owner, const char *name, const char *owner_name) {
  PyObject *v = PyObject_GetAttrString(owner, name);
  if (!v) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError,
                 "callsite.mlir: %.200s has no %s: not MLIR Python bindings (expected a module "
                 "like mlir.ir, iree.compiler.ir or jaxlib.mlir.ir)",
                 owner_name, name);
  }
  return v;
}

PyObject *bindings_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"ir", nullptr};
  PyObject *ir = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:MlirBindings", const_cast<char **>(kwlist), &ir))
    return nullptr;
  for (BindingsObject *b : registry)
    if (b->ir == ir) return Py_NewRef(reinterpret_cast<PyObject *>(b));
  auto *b = reinterpret_cast<BindingsObject *>(type->tp_alloc(type, 0));
  if (!b) return nullptr;
  b->refs_per_location = -1;
  b->ir = Py_NewRef(ir);
  PyObject *self = reinterpret_cast<PyObject *>(b);
  PyObject *name = PyObject_Repr(ir);
  const char *what = name ? PyUnicode_AsUTF8(name) : "module";
  if (!what) what = "module";
  bool ok = (b->context_type = attr_or_type_error(ir, "Context", what)) &&
            (b->location_type = attr_or_type_error(ir, "Location", what)) &&
            (b->opview_type = attr_or_type_error(ir, "OpView", what)) &&
            (b->operation_type = attr_or_type_error(ir, "Operation", what)) &&
            (b->module_type = attr_or_type_error(ir, "Module", what)) &&
            (b->loc_file = attr_or_type_error(b->location_type, "file", "Location")) &&
            (b->loc_name = attr_or_type_error(b->location_type, "name", "Location")) &&
            (b->loc_callsite = attr_or_type_error(b->location_type, "callsite", "Location")) &&
            (b->loc_unknown = attr_or_type_error(b->location_type, "unknown", "Location"));
  Py_XDECREF(name);
  if (ok) {
    b->nameloc_type = PyObject_GetAttrString(ir, "NameLoc");  // typed locations: newer MLIR
    if (!b->nameloc_type) PyErr_Clear();
    if (b->nameloc_type && !PyType_Check(b->nameloc_type)) Py_CLEAR(b->nameloc_type);
    ok = PyType_Check(b->context_type) && PyType_Check(b->opview_type) &&
         PyType_Check(b->operation_type) && PyType_Check(b->module_type);
    if (!ok)
      PyErr_SetString(PyExc_TypeError,
                      "callsite.mlir: Context/OpView/Operation/Module are not classes");
  }
  if (!ok) {
    Py_DECREF(self);
    return nullptr;
  }
  registry.push_back(b);
  Py_INCREF(self);  // the registry's reference: bindings are never unloaded
  return self;
}

void bindings_dealloc(PyObject *self) {
  BindingsObject *b = as_b(self);
  for (PyObject **p : {&b->ir, &b->context_type, &b->location_type, &b->opview_type,
                       &b->operation_type, &b->module_type, &b->nameloc_type, &b->loc_file,
                       &b->loc_name, &b->loc_callsite, &b->loc_unknown, &b->process_settings})
    Py_CLEAR(*p);
  for (int i = 0; i < BindingsObject::kEntryPoints; ++i) {
    Py_CLEAR(b->saved[i]);
    Py_CLEAR(b->installed[i]);
  }
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

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

PyObject *py_acquire(PyObject *self, PyObject *) {
  if (!acquire_wrappers(as_b(self))) return nullptr;
  Py_RETURN_NONE;
}
PyObject *py_release(PyObject *self, PyObject *) {
  if (!release_wrappers(as_b(self))) return nullptr;
  Py_RETURN_NONE;
}
PyObject *get_ir(PyObject *self, void *) { return Py_NewRef(as_b(self)->ir); }
PyObject *get_installed(PyObject *self, void *) {
  return PyBool_FromLong(as_b(self)->active_scopes > 0);
}
PyObject *get_refs(PyObject *self, void *) { return PyLong_FromLong(as_b(self)->refs_per_location); }
PyObject *get_process_settings(PyObject *self, void *) {
  PyObject *s = as_b(self)->process_settings;
  return Py_NewRef(s ? s : Py_None);
}
int set_process_settings(PyObject *self, PyObject *value, void *) {
  if (value && value != Py_None && !PyObject_TypeCheck(value, settings_type)) {
    PyErr_Format(PyExc_TypeError, "process_settings must be a callsite.MlirSettings or None, not %.200s",
                 Py_TYPE(value)->tp_name);
    return -1;
  }
  Py_XSETREF(as_b(self)->process_settings, value && value != Py_None ? Py_NewRef(value) : nullptr);
  return 0;
}
PyObject *bindings_repr(PyObject *self) {
  return PyUnicode_FromFormat("<callsite MlirBindings for %R>", as_b(self)->ir);
}

PyMethodDef bindings_methods[] = {
    {"acquire", py_acquire, METH_NOARGS,
     "acquire(): one more scope needs the op-builder wrappers (installed on the first)."},
    {"release", py_release, METH_NOARGS,
     "release(): one scope fewer (the originals are restored with the last)."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef bindings_getset[] = {
    {"ir", get_ir, nullptr, "the ir module", nullptr},
    {"installed", get_installed, nullptr, "bool: the wrappers are in place", nullptr},
    {"process_settings", get_process_settings, set_process_settings,
     "MlirSettings | None: used by threads without an auto_locations scope (MLIR's process-wide "
     "switch, as callsite.mlir.accelerate maps it)",
     nullptr},
    {"refs_per_location", get_refs, nullptr,
     "int: context references one ir.Location holds (-1: not measured yet)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot bindings_slots[] = {
    {Py_tp_doc, const_cast<char *>("MlirBindings(ir): MLIR Python bindings as callsite uses them.")},
    {Py_tp_new, reinterpret_cast<void *>(bindings_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(bindings_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(bindings_repr)},
    {Py_tp_methods, bindings_methods},
    {Py_tp_getset, bindings_getset},
    {0, nullptr}};

PyType_Spec bindings_spec = {"callsite.MlirBindings", int(sizeof(BindingsObject)), 0,
                             Py_TPFLAGS_DEFAULT, bindings_slots};

PyObject *current_of(PyObject *type) {
  PyObject *v = PyObject_GetAttr(type, str_current);
  if (v == Py_None) Py_CLEAR(v);
  return v;
}

}  // namespace

PyTypeObject *init_bindings_type() noexcept {
  if (bindings_type) return bindings_type;
  str_current = PyUnicode_InternFromString("current");
  if (!str_current || !init_injectors() || !init_context_caches()) return nullptr;
  bindings_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&bindings_spec));
  return bindings_type;
}

const std::vector<BindingsObject *> &all_bindings() noexcept { return registry; }

// nanobind's static property `current` raises nothing when empty: it returns None.
PyObject *current_context(BindingsObject *b) noexcept { return current_of(b->context_type); }
PyObject *current_location(BindingsObject *b) noexcept { return current_of(b->location_type); }

BindingsObject *bindings_of_context(PyObject *ctx) noexcept {
  for (BindingsObject *b : registry)
    if (PyObject_TypeCheck(ctx, reinterpret_cast<PyTypeObject *>(b->context_type))) return b;
  return nullptr;
}

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
