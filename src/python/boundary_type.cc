// python/boundary_type.cc — callsite.boundary(kernel): `with` opens the boundary for the
// calling thread and asyncio task (a context variable), its exit removes exactly it (the state
// and the chain are in capture/boundary.{h,cc}).
#include "python/boundary_type.h"

#include "capture/boundary.h"

namespace callsite::detail {

namespace {

PyObject *boundary_new(PyTypeObject *, PyObject *args, PyObject *kwargs) {
  static const char *const kNames[] = {"kernel", nullptr};
  PyObject *kernel = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O:boundary", const_cast<char **>(kNames),
                                   &kernel))
    return nullptr;
  return new_boundary(kernel, "kernel");
}

void boundary_dealloc(PyObject *self) {
  BoundaryObject *b = as_boundary(self);
  // Every context whose chain holds it holds a reference: dropped while entered means those
  // contexts are gone (a generator never resumed, a finished task); the count stays, which
  // costs walks a context read, never a wrong stop.
  Py_XDECREF(b->rewritten);
  Py_XDECREF(b->code);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject *boundary_enter(PyObject *self, PyObject *) {
  if (enter_boundary(self) < 0) return nullptr;
  return Py_NewRef(self);
}

PyObject *boundary_exit(PyObject *self, PyObject *const *, Py_ssize_t) {
  if (exit_boundary(self) < 0) return nullptr;
  Py_RETURN_FALSE;
}

PyObject *get_code(PyObject *self, void *) { return Py_NewRef(as_boundary(self)->code); }
PyObject *get_open(PyObject *self, void *) { return PyBool_FromLong(as_boundary(self)->entered); }

PyObject *boundary_repr(PyObject *self) {
  auto *code = reinterpret_cast<PyCodeObject *>(as_boundary(self)->code);
  return PyUnicode_FromFormat("callsite.boundary(<code %U, file %R, line %d>)", code->co_name,
                              code->co_filename, code->co_firstlineno);
}

PyMethodDef boundary_methods[] = {
    {"__enter__", boundary_enter, METH_NOARGS,
     "Opens the boundary for the calling thread and asyncio task; returns the boundary."},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(boundary_exit)),
     METH_FASTCALL,
     "Closes it: removes exactly this boundary, wherever it is among the open ones."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef boundary_getset[] = {
    {"code", get_code, nullptr, "The kernel's code object: walks stop at its frames.", nullptr},
    {"open", get_open, nullptr, "Whether the boundary is open (inside its `with`).", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot boundary_slots[] = {
    {Py_tp_doc,
     const_cast<char *>(
         "boundary(kernel)\n--\n\n"
         "Inside `with callsite.boundary(kernel):` every capture, Filter.first_user_frame() and\n"
         "MLIR location stops its chain at the innermost frame running kernel's code (or the\n"
         "code a DSL compiled from kernel's source: same file, name and lines), keeps that\n"
         "frame whatever a filter's rules say, and walks nothing below it. Per thread and\n"
         "asyncio task; nestable. kernel: a function, method, code object, or a decorator's\n"
         "result wrapping one through __wrapped__ (TypeError otherwise).\n\n"
         R"doc(Raises:
    TypeError: ``kernel`` is not a function, method or code object (nor wraps one), as
        in ``callsite.boundary(3)``.
    RuntimeError: the same boundary object is entered twice at once.

Example:
    ::

        import callsite

        def kernel():
            def tile():
                return callsite.capture()
            return tile()

        def framework(depth):                 # stands for the DSL's decorator, tracer, launcher
            return kernel() if depth == 0 else framework(depth - 1)

        with callsite.boundary(kernel):
            tb = framework(100)
        print([f.name for f in tb])           # ['tile', 'kernel']: nothing below the kernel
)doc")},
    {Py_tp_new, reinterpret_cast<void *>(boundary_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(boundary_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(boundary_repr)},
    {Py_tp_methods, boundary_methods},
    {Py_tp_getset, boundary_getset},
    {0, nullptr}};

PyType_Spec boundary_spec = {"callsite.boundary", int(sizeof(BoundaryObject)), 0,
                             Py_TPFLAGS_DEFAULT, boundary_slots};

}  // namespace

PyTypeObject *init_boundary_type() noexcept {
  if (!boundary_type)
    boundary_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&boundary_spec));
  return boundary_type;
}

}  // namespace callsite::detail
