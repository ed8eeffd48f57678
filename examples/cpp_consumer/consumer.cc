// examples/cpp_consumer/consumer.cc — an extension module OUTSIDE locus pushing native frames
// onto locus's shadow stack through the C API capsule (find_package(locus) headers only).
//
//   import locus_consumer
//   locus_consumer.run(callback, steps)   # a "kernel" calling callback(pc) for pc in range
//   locus_consumer.where()                # the kernel's location, symbolized from C++
#include <Python.h>

#include "locus/api.h"

namespace {

// The "source" of the kernel: line pc + 1 of kernel.dsl. Called lazily by locus, once per pc.
int reify_kernel(const locus::Executable *, std::uintptr_t pc,
                 locus::NativeLocation *out) noexcept {
  out->filename = "kernel.dsl";
  out->name = "kernel";
  out->lineno = out->end_lineno = int(pc) + 1;
  out->colno = 2;
  out->end_colno = 10;
  return 0;
}

// Static storage: nothing to refcount.
const locus::Executable kKernel{"kernel", "jit", &reify_kernel};

// run(callback, steps): the kernel's frame is active while callback runs, at state pc.
PyObject *run(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "run(callback, steps)");
  const long steps = PyLong_AsLong(args[1]);
  if (steps == -1 && PyErr_Occurred()) return nullptr;
  locus::NativeFrame frame(kKernel);
  for (long pc = 0; pc < steps; ++pc) {
    frame.set_state(std::uintptr_t(pc));
    PyObject *arg = PyLong_FromLong(pc);
    PyObject *r = arg ? PyObject_CallOneArg(args[0], arg) : nullptr;
    Py_XDECREF(arg);
    if (!r) return frame.add_traceback();  // kernel.dsl:pc+1 goes into the traceback
    Py_DECREF(r);
  }
  Py_RETURN_NONE;
}

// where() -> (filename, lineno, kind_of_innermost): symbolizes from C++ through the API.
PyObject *where(PyObject *, PyObject *) {
  locus::NativeFrame frame(kKernel, 41);
  locus::RawFrame raw[8];
  const std::size_t n = locus::api::capture_raw(raw, 8);
  if (n == 0) return PyErr_Format(PyExc_RuntimeError, "empty capture");
  locus::FrameInfo info;
  if (!locus::api::symbolize(raw[0], &info)) return nullptr;
  return Py_BuildValue("(Ois)", info.filename, info.lineno,
                       raw[0].is_python() ? "python" : "native");
}

// capture() -> locus.Traceback taken with the kernel frame active.
PyObject *capture(PyObject *, PyObject *) {
  locus::NativeFrame frame(kKernel, 6);
  return locus::api::capture();
}

PyMethodDef methods[] = {
    {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(run)), METH_FASTCALL,
     "run(callback, steps): calls callback(pc) for each pc inside the kernel's native frame."},
    {"where", where, METH_NOARGS, "where() -> (filename, lineno, kind) of the innermost frame."},
    {"capture", capture, METH_NOARGS, "capture() -> locus.Traceback inside the kernel frame."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "locus_consumer",
                      "An example C++ consumer of locus's native frames.", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit_locus_consumer() {
  if (!locus::api::import()) return nullptr;  // imports locus._locus, checks the version
  return PyModule_Create(&module);
}
