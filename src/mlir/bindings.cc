// mlir/bindings.cc — one `ir` module's classes as callsite uses them, and the registry of them.
#include "mlir/bindings.h"

#include <cstring>
#include <exception>

#include "core/compat.h"

namespace callsite::mlir {
namespace {

std::vector<BindingsObject *> registry;
PyObject *str_current = nullptr;

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

// `current` is a static property in nanobind (nb_static_property) and pybind11
// (pybind11_static_property): property subclasses whose __get__ on the class calls
// fget(cls). The getter is called directly, which skips the attribute lookup and the
// descriptor, as long as the class keeps the version tag it had when the getter was found.
bool is_static_property(PyObject *descr) {
  if (!PyObject_TypeCheck(descr, &PyProperty_Type)) return false;
  const char *name = Py_TYPE(descr)->tp_name;
  const std::size_t n = std::strlen(name), m = sizeof("static_property") - 1;
  return n >= m && std::strcmp(name + n - m, "static_property") == 0;
}

// `current` as the class's MRO holds it (no descriptor called), borrowed; nullptr if absent.
PyObject *static_lookup(PyTypeObject *type) {
  PyObject *mro = type->tp_mro;
  if (!mro || !PyTuple_Check(mro)) return nullptr;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(mro); ++i) {
    PyObject *base = PyTuple_GET_ITEM(mro, i);
    PyObject *dict = PyType_Check(base) ? reinterpret_cast<PyTypeObject *>(base)->tp_dict : nullptr;
    if (!dict) continue;
    if (PyObject *v = PyDict_GetItemWithError(dict, str_current)) return v;
    if (PyErr_Occurred()) return nullptr;
  }
  return nullptr;
}

PyObject *current_of(PyObject *type, BindingsObject::CurrentGetter &getter) {
  auto *t = reinterpret_cast<PyTypeObject *>(type);
  PyObject *v;
  if (getter.fget && getter.version != 0 && compat::valid_type_version(t) == getter.version) {
    PyObject *fget = Py_NewRef(getter.fget);  // held: the call may run any code
    v = PyObject_Vectorcall(fget, &type, 1, nullptr);
    Py_DECREF(fget);
  } else {
    // The lookup (re)assigns the class's version tag; the getter found after it is kept only
    // when calling it gives what the lookup gave.
    v = PyObject_GetAttr(type, str_current);
    Py_CLEAR(getter.fget);
    PyObject *descr = v ? static_lookup(t) : nullptr;
    PyObject *fget = descr && is_static_property(descr)
                         ? PyObject_GetAttrString(descr, "fget")
                         : nullptr;
    const unsigned int version = compat::valid_type_version(t);
    if (fget && PyCallable_Check(fget) && version != 0) {
      PyObject *again = PyObject_Vectorcall(fget, &type, 1, nullptr);
      if (again == v && compat::valid_type_version(t) == version) {
        getter.fget = Py_NewRef(fget);
        getter.version = version;
      }
      Py_XDECREF(again);
    }
    Py_XDECREF(fget);
    if (v) PyErr_Clear();  // a failed probe only leaves the slow path in use
  }
  if (v == Py_None) Py_CLEAR(v);
  return v;
}

}  // namespace

BindingsObject *registered_bindings(PyObject *ir) noexcept {
  for (BindingsObject *b : registry)
    if (b->ir == ir) return b;
  return nullptr;
}

bool fill_bindings(BindingsObject *b, PyObject *ir) noexcept {
  b->refs_per_location = -1;
  b->ir = Py_NewRef(ir);
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
    static constexpr const char *kTyped[BindingsObject::kTypedLocations] = {
        "CallSiteLoc", "NameLoc", "FileLineColLoc", "UnknownLoc", "FusedLoc"};
    for (int i = 0; i < BindingsObject::kTypedLocations; ++i) {
      PyObject *t = PyObject_GetAttrString(ir, kTyped[i]);
      if (!t) PyErr_Clear();
      // Only a subclass of Location: what a cast of one gives stands in for it.
      if (t && !(PyType_Check(t) && PyObject_IsSubclass(t, b->location_type) == 1)) {
        PyErr_Clear();
        Py_CLEAR(t);
      }
      b->typed_location_types[i] = t;
    }
    ok = PyType_Check(b->context_type) && PyType_Check(b->opview_type) &&
         PyType_Check(b->operation_type) && PyType_Check(b->module_type);
    if (!ok)
      PyErr_SetString(PyExc_TypeError,
                      "callsite.mlir: Context/OpView/Operation/Module are not classes");
  }
  return ok;
}

bool register_bindings(BindingsObject *b) noexcept {
  try {
    registry.push_back(b);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    PyErr_NoMemory();
    return false;
  }
  Py_INCREF(reinterpret_cast<PyObject *>(b));  // the registry's reference: never unloaded
  return true;
}

void clear_bindings(BindingsObject *b) noexcept {
  for (PyObject **p : {&b->ir, &b->context_type, &b->location_type, &b->opview_type,
                       &b->operation_type, &b->module_type, &b->nameloc_type, &b->loc_file,
                       &b->loc_name, &b->loc_callsite, &b->loc_unknown, &b->process_settings,
                       &b->context_current.fget,
                       &b->location_current.fget})
    Py_CLEAR(*p);
  for (PyObject *&t : b->typed_location_types) Py_CLEAR(t);
  for (int i = 0; i < BindingsObject::kEntryPoints; ++i) {
    Py_CLEAR(b->saved[i]);
    Py_CLEAR(b->installed[i]);
  }
}

const std::vector<BindingsObject *> &all_bindings() noexcept { return registry; }

// nanobind's static property `current` raises nothing when empty: it returns None.
PyObject *current_context(BindingsObject *b) noexcept {
  return current_of(b->context_type, b->context_current);
}
PyObject *current_location(BindingsObject *b) noexcept {
  return current_of(b->location_type, b->location_current);
}

BindingsObject *bindings_of_context(PyObject *ctx) noexcept {
  for (BindingsObject *b : registry)
    if (PyObject_TypeCheck(ctx, reinterpret_cast<PyTypeObject *>(b->context_type))) return b;
  return nullptr;
}

bool init_bindings() noexcept {
  if (!str_current) str_current = PyUnicode_InternFromString("current");
  return str_current != nullptr;
}

}  // namespace callsite::mlir
