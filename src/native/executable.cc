// native/executable.cc — executables owned by Python objects: allocation, the C API's
// new_executable / executable_of, and the tag of Python reifiers.
#include "native/executable.h"

namespace callsite::native {

PyTypeObject *executable_type = nullptr;

int python_reifier(const Executable *, std::uintptr_t, NativeLocation *) noexcept {
  return -1;  // a tag: reify.cc calls the Python callable itself
}

ExecutableObject *allocate_executable(PyTypeObject *type, PyObject *name, PyObject *kind) noexcept {
  const char *name_utf8 = PyUnicode_AsUTF8(name);
  const char *kind_utf8 = name_utf8 ? PyUnicode_AsUTF8(kind) : nullptr;
  if (!kind_utf8) return nullptr;
  auto *self = reinterpret_cast<ExecutableObject *>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  self->name = Py_NewRef(name);
  self->kind = Py_NewRef(kind);
  self->exe.name = name_utf8;  // the str objects keep their UTF-8 buffers while we hold them
  self->exe.kind = kind_utf8;
  self->exe.owner = reinterpret_cast<PyObject *>(self);
  self->visible_states = -1;
  return self;
}

PyObject *new_executable(const char *name, const char *kind, Reifier reify, void *user_data,
                         void (*free_user_data)(void *)) noexcept {
  if (!executable_type) {
    PyErr_SetString(PyExc_RuntimeError, "callsite: the native frame types are not initialised");
    if (free_user_data) free_user_data(user_data);
    return nullptr;
  }
  PyObject *name_obj = PyUnicode_FromString(name ? name : "?");
  PyObject *kind_obj = name_obj ? PyUnicode_FromString(kind ? kind : "native") : nullptr;
  ExecutableObject *self = kind_obj ? allocate_executable(executable_type, name_obj, kind_obj) : nullptr;
  Py_XDECREF(name_obj);
  Py_XDECREF(kind_obj);
  if (!self) {
    if (free_user_data) free_user_data(user_data);
    return nullptr;
  }
  self->exe.reify = reify;
  self->exe.user_data = user_data;
  self->free_user_data = free_user_data;
  return reinterpret_cast<PyObject *>(self);
}

const Executable *executable_of(PyObject *obj) noexcept {
  if (!executable_type || !PyObject_TypeCheck(obj, executable_type)) {
    PyErr_Format(PyExc_TypeError, "expected a callsite.native.Executable, not %.200s",
                 Py_TYPE(obj)->tp_name);
    return nullptr;
  }
  return &reinterpret_cast<ExecutableObject *>(obj)->exe;
}

}  // namespace callsite::native
