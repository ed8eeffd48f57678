// mlir/bindings_type.cc — callsite.mlir.MlirBindings: the Python face of mlir/bindings.h
// (acquire/release of the wrappers, the process-wide settings snapshot).
#include "mlir/bindings_type.h"

#include "mlir/bindings.h"
#include "mlir/capi.h"
#include "mlir/context_cache.h"
#include "mlir/settings.h"
#include "mlir/wrappers.h"

namespace callsite::mlir {

PyTypeObject *bindings_type = nullptr;

namespace {

inline BindingsObject *as_b(PyObject *o) { return reinterpret_cast<BindingsObject *>(o); }

PyObject *bindings_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"ir", nullptr};
  PyObject *ir = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:MlirBindings", const_cast<char **>(kwlist), &ir))
    return nullptr;
  if (BindingsObject *found = registered_bindings(ir))
    return Py_NewRef(reinterpret_cast<PyObject *>(found));
  auto *b = reinterpret_cast<BindingsObject *>(type->tp_alloc(type, 0));
  if (!b) return nullptr;
  if (!fill_bindings(b, ir)) {
    Py_DECREF(reinterpret_cast<PyObject *>(b));
    return nullptr;
  }
  // Before registration: no Context's cache may be made for these bindings before their one
  // choice of location builder is known.
  resolve_capi(b);
  if (!register_bindings(b)) {
    Py_DECREF(reinterpret_cast<PyObject *>(b));
    return nullptr;
  }
  return reinterpret_cast<PyObject *>(b);
}

void bindings_dealloc(PyObject *self) {
  release_capi(as_b(self));  // only unregistered bindings are ever freed: no cache uses them
  clear_bindings(as_b(self));
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
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
PyObject *get_location_api(PyObject *self, void *) {
  BindingsObject *b = as_b(self);
  if (b->capi && b->python_api_forced)
    return PyUnicode_FromString("Python API (forced: MLIR's C API was found)");
  return Py_NewRef(b->capi_status ? b->capi_status : Py_None);
}
// Private (the tests run both paths on the same bindings): the caches start over, since each
// was made for one path.
PyObject *py_use_python_api(PyObject *self, PyObject *arg) {
  const int on = PyObject_IsTrue(arg);
  if (on < 0) return nullptr;
  as_b(self)->python_api_forced = on != 0;
  clear_all_caches();
  Py_RETURN_NONE;
}
// Private (tests): whether Context.current's getter is called directly.
PyObject *get_direct_current(PyObject *self, void *) {
  return PyBool_FromLong(as_b(self)->context_current.fget != nullptr);
}
PyObject *bindings_repr(PyObject *self) {
  return PyUnicode_FromFormat("<callsite MlirBindings for %R>", as_b(self)->ir);
}

PyMethodDef bindings_methods[] = {
    {"acquire", py_acquire, METH_NOARGS,
     "acquire(): one more scope needs the op-builder wrappers (installed on the first)."},
    {"release", py_release, METH_NOARGS,
     "release(): one scope fewer (the originals are restored with the last)."},
    {"_use_python_api", py_use_python_api, METH_O,
     "_use_python_api(flag): build locations through the bindings' Python API even where "
     "MLIR's C API was found (private: tests); drops every location cache."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef bindings_getset[] = {
    {"ir", get_ir, nullptr, "the ir module", nullptr},
    {"installed", get_installed, nullptr, "bool: the wrappers are in place", nullptr},
    {"process_settings", get_process_settings, set_process_settings,
     "MlirSettings | None: used by threads without an auto_locations scope (MLIR's process-wide "
     "switch, as callsite.mlir.accelerate maps it)",
     nullptr},
    {"location_api", get_location_api, nullptr,
     "str: how locations are built: through MLIR's C API (the library exporting it) or the "
     "bindings' Python API (and why)",
     nullptr},
    {"refs_per_location", get_refs, nullptr,
     "int: context references one ir.Location holds (-1: not measured yet)", nullptr},
    {"_direct_current", get_direct_current, nullptr,
     "bool: Context.current's getter is called directly (private: tests)", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot bindings_slots[] = {
    {Py_tp_doc, const_cast<char *>("MlirBindings(ir): MLIR Python bindings as callsite uses them.")},
    {Py_tp_new, reinterpret_cast<void *>(bindings_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(bindings_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(bindings_repr)},
    {Py_tp_methods, bindings_methods},
    {Py_tp_getset, bindings_getset},
    {0, nullptr}};

PyType_Spec bindings_spec = {"callsite.mlir.MlirBindings", int(sizeof(BindingsObject)), 0,
                             Py_TPFLAGS_DEFAULT, bindings_slots};

}  // namespace

PyTypeObject *init_bindings_type() noexcept {
  if (!bindings_type)
    bindings_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&bindings_spec));
  return bindings_type;
}

}  // namespace callsite::mlir
