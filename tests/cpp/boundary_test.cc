// tests/cpp/boundary_test.cc — the kernel boundary from C++ (callsite::api::Boundary, the C
// API's open/close entries): a capture inside ends at the kernel's frame, for both backends,
// whatever the depth under it; a bad kernel is a TypeError; closing restores the outer one.
#include <gtest/gtest.h>

#include <string>

#include "callsite/api.h"
#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "symbolize/symbolize.h"

namespace {

// Runs `source` in fresh globals holding `probe`, and returns the globals (new reference).
PyObject *run(const std::string &source, PyCFunction probe) {
  static PyMethodDef def = {"probe", nullptr, METH_NOARGS, nullptr};
  def.ml_meth = probe;
  PyObject *globals = PyDict_New();
  PyObject *fn = PyCFunction_New(&def, nullptr);
  PyDict_SetItemString(globals, "probe", fn);
  Py_DECREF(fn);
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject *done = PyRun_String(source.c_str(), Py_file_input, globals, globals);
  EXPECT_NE(done, nullptr);
  if (!done) PyErr_Print();
  Py_XDECREF(done);
  return globals;
}

std::string innermost_name(PyObject *tb, std::size_t i) {
  callsite::FrameInfo info;
  if (!callsite::symbolize(callsite::traceback_frames(tb)[i], &info)) return "?";
  return PyUnicode_AsUTF8(info.name);
}

// probe(): a capture inside a Boundary at the global `kernel`.
PyObject *bounded_probe(PyObject *, PyObject *) {
  PyObject *globals = PyEval_GetGlobals();
  callsite::api::Boundary boundary(PyDict_GetItemString(globals, "kernel"));
  if (!boundary) return nullptr;
  return callsite::api::capture();
}

constexpr const char *kProgram =
    "def helper(n):\n"
    "    return probe() if n == 0 else helper(n - 1)\n"
    "def kernel():\n"
    "    return helper(3)\n"
    "def framework(n):\n"
    "    return kernel() if n == 0 else framework(n - 1)\n"
    "result = framework(40)\n";

TEST(Boundary, CaptureEndsAtTheKernelFrame) {
  for (auto backend : {callsite::Backend::internal, callsite::Backend::public_api}) {
    if (!callsite::set_backend(backend)) continue;  // a build without a layout
    PyObject *globals = run(kProgram, bounded_probe);
    PyObject *tb = PyDict_GetItemString(globals, "result");
    ASSERT_NE(tb, nullptr);
    ASSERT_TRUE(callsite::is_traceback(tb));
    // helper x 4, then kernel: nothing of framework's 41 frames nor the module.
    ASSERT_EQ(callsite::traceback_size(tb), 5u);
    EXPECT_EQ(innermost_name(tb, 0), "helper");
    EXPECT_EQ(innermost_name(tb, 4), "kernel");
    EXPECT_EQ(callsite::traceback_end(tb), callsite::WalkEnd::at_boundary);
    Py_DECREF(globals);
  }
  callsite::set_backend(callsite::Backend::internal);
}

PyObject *unbounded_probe(PyObject *, PyObject *) { return callsite::api::capture(); }

TEST(Boundary, ClosedBoundaryLeavesTheWholeStack) {
  PyObject *globals = run(kProgram, unbounded_probe);
  PyObject *tb = PyDict_GetItemString(globals, "result");
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(callsite::traceback_size(tb), 4u + 1u + 41u + 1u);
  EXPECT_EQ(callsite::traceback_end(tb), callsite::WalkEnd::complete);
  Py_DECREF(globals);
}

TEST(Boundary, BadKernelIsATypeErrorNamingIt) {
  callsite::api::Boundary boundary(Py_None);
  EXPECT_FALSE(boundary);
  ASSERT_TRUE(PyErr_ExceptionMatches(PyExc_TypeError));
  PyObject *type, *value, *traceback;
  PyErr_Fetch(&type, &value, &traceback);
  PyObject *text = PyObject_Str(value);
  const std::string message = PyUnicode_AsUTF8(text);
  EXPECT_NE(message.find("kernel must be a function, method or code object"), std::string::npos)
      << message;
  EXPECT_NE(message.find("NoneType"), std::string::npos) << message;
  Py_DECREF(text);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(traceback);
}

TEST(Boundary, IsAnEntryOfTheTable) {
  EXPECT_TRUE(callsite::api::has_entry(offsetof(callsite::NativeAPI, close_boundary)));
}

}  // namespace
