// examples/cpp_consumer/consumer.cc — an extension module OUTSIDE callsite pushing native frames
// onto callsite's shadow stack through the C API capsule (find_package(callsite) headers only).
//
//   import callsite_consumer
//   callsite_consumer.run(callback, steps)   # a "kernel" calling callback(pc) for pc in range
//   callsite_consumer.where()                # the kernel's location, symbolized from C++
#include <Python.h>

#include "callsite/api.h"

namespace {

// The "source" of the kernel: line pc + 1 of kernel.dsl. Called lazily by callsite, once per pc.
int reify_kernel(const callsite::Executable *, std::uintptr_t pc,
                 callsite::NativeLocation *out) noexcept {
  out->filename = "kernel.dsl";
  out->name = "kernel";
  out->lineno = out->end_lineno = int(pc) + 1;
  out->colno = 2;
  out->end_colno = 10;
  return 0;
}

// Static storage: nothing to refcount.
const callsite::Executable kKernel{"kernel", "jit", &reify_kernel};

// run(callback, steps): the kernel's frame is active while callback runs, at state pc.
PyObject *run(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) return PyErr_Format(PyExc_TypeError, "run(callback, steps)");
  const long steps = PyLong_AsLong(args[1]);
  if (steps == -1 && PyErr_Occurred()) return nullptr;
  callsite::NativeFrame frame(kKernel);
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
  callsite::NativeFrame frame(kKernel, 41);
  callsite::RawFrame raw[8];
  const std::size_t n = callsite::api::capture_raw(raw, 8);
  if (n == 0) return PyErr_Format(PyExc_RuntimeError, "empty capture");
  callsite::FrameInfo info;
  if (!callsite::api::symbolize(raw[0], &info)) return nullptr;
  return Py_BuildValue("(Ois)", info.filename, info.lineno,
                       raw[0].is_python() ? "python" : "native");
}

// capture() -> callsite.Traceback taken with the kernel frame active.
PyObject *capture(PyObject *, PyObject *) {
  callsite::NativeFrame frame(kKernel, 6);
  return callsite::api::capture();
}

PyMethodDef methods[] = {
    {"run", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(run)), METH_FASTCALL,
     "run(callback, steps): calls callback(pc) for each pc inside the kernel's native frame."},
    {"where", where, METH_NOARGS, "where() -> (filename, lineno, kind) of the innermost frame."},
    {"capture", capture, METH_NOARGS, "capture() -> callsite.Traceback inside the kernel frame."},
    {nullptr, nullptr, 0, nullptr}};

PyModuleDef module = {PyModuleDef_HEAD_INIT, "callsite_consumer",
                      "An example C++ consumer of callsite's native frames.", -1, methods};

}  // namespace

PyMODINIT_FUNC PyInit_callsite_consumer() {
  if (!callsite::api::import()) return nullptr;  // imports callsite._callsite, checks the version
  return PyModule_Create(&module);
}
