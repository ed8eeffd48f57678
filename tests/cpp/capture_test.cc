// tests/cpp/capture_test.cc — the C++ capture API from an embedded interpreter: no Python frame
// at all (a C caller holding the GIL), buffer-size contracts, and both backends agreeing.
#include <gtest/gtest.h>

#include <vector>

#include "capture/backend.h"
#include "capture/traceback_storage.h"
#include "capture/capture.h"
#include "symbolize/symbolize.h"
#include "python/frame_type.h"
#include "symbolize/code_info.h"

namespace {

class Capture : public ::testing::Test {
 protected:
};

// What a Python function calling into C sees: records capture_raw with a tiny buffer.
std::size_t g_needed = 0;
std::vector<callsite::RawFrame> g_seen;
PyObject *probe(PyObject *, PyObject *) {
  callsite::RawFrame small[2];
  g_needed = callsite::capture_raw(small, 2);
  g_seen.assign(small, small + std::min<std::size_t>(g_needed, 2));
  return callsite::capture();
}
PyMethodDef probe_def = {"probe", probe, METH_NOARGS, nullptr};

PyObject *run_nested(int depth) {
  PyObject *globals = PyDict_New();
  PyObject *fn = PyCFunction_New(&probe_def, nullptr);
  PyDict_SetItemString(globals, "probe", fn);
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  Py_DECREF(fn);
  PyObject *src = PyUnicode_FromFormat(
      "def f(n):\n    return probe() if n == 0 else f(n - 1)\nresult = f(%d)\n", depth);
  PyObject *code = Py_CompileString(PyUnicode_AsUTF8(src), "<nested>", Py_file_input);
  Py_DECREF(src);
  EXPECT_NE(code, nullptr);
  PyObject *done = PyEval_EvalCode(code, globals, globals);
  Py_XDECREF(code);
  EXPECT_NE(done, nullptr);
  Py_XDECREF(done);
  PyObject *result = PyDict_GetItemString(globals, "result");
  Py_XINCREF(result);
  Py_DECREF(globals);
  return result;
}

TEST_F(Capture, NoPythonFrameGivesAnEmptyTraceback) {
  for (auto backend : {callsite::Backend::internal, callsite::Backend::public_api}) {
    if (!callsite::set_backend(backend)) continue;  // a build without a layout
    callsite::RawFrame buf[4];
    EXPECT_EQ(callsite::capture_raw(buf, 4), 0u);
    PyObject *tb = callsite::capture();
    ASSERT_NE(tb, nullptr);
    EXPECT_TRUE(callsite::is_traceback(tb));
    EXPECT_EQ(callsite::traceback_size(tb), 0u);
    Py_DECREF(tb);
  }
}

TEST_F(Capture, RawReportsTheNeededSizeWhenTheBufferIsSmall) {
  PyObject *tb = run_nested(5);  // <module>, f x 6
  ASSERT_NE(tb, nullptr);
  EXPECT_EQ(g_needed, 7u);
  ASSERT_EQ(g_seen.size(), 2u);
  EXPECT_EQ(callsite::traceback_size(tb), 7u);
  EXPECT_EQ(g_seen[0], callsite::traceback_frames(tb)[0]);
  EXPECT_EQ(g_seen[1], callsite::traceback_frames(tb)[1]);
  callsite::FrameInfo info;
  ASSERT_TRUE(callsite::symbolize(callsite::traceback_frames(tb)[0], &info));
  EXPECT_STREQ(PyUnicode_AsUTF8(info.filename), "<nested>");
  EXPECT_STREQ(PyUnicode_AsUTF8(info.name), "f");
  EXPECT_EQ(info.lineno, 2);
  ASSERT_TRUE(callsite::symbolize(callsite::traceback_frames(tb)[6], &info));
  EXPECT_EQ(info.lineno, 3);
  Py_DECREF(tb);
}

TEST_F(Capture, BackendsAgreeFrameForFrame) {
  if (!callsite::set_backend(callsite::Backend::internal)) GTEST_SKIP() << "no internal layout";
  PyObject *internal = run_nested(40);
  callsite::set_backend(callsite::Backend::public_api);
  PyObject *public_api = run_nested(40);
  callsite::set_backend(callsite::Backend::internal);
  ASSERT_TRUE(internal && public_api);
  ASSERT_EQ(callsite::traceback_size(internal), callsite::traceback_size(public_api));
  // Different code objects (compiled twice) but the same offsets.
  for (std::size_t i = 0; i < callsite::traceback_size(internal); ++i)
    EXPECT_EQ(callsite::traceback_frames(internal)[i].payload,
              callsite::traceback_frames(public_api)[i].payload);
  Py_DECREF(internal);
  Py_DECREF(public_api);
}

TEST_F(Capture, MakeTracebackOwnsItsCodeObjects) {
  PyObject *tb = run_nested(1);
  ASSERT_NE(tb, nullptr);
  auto *code = static_cast<PyObject *>(callsite::traceback_frames(tb)[0].code());
  const Py_ssize_t before = Py_REFCNT(code);
  PyObject *copy = callsite::new_traceback(callsite::traceback_frames(tb), 2);
  EXPECT_EQ(Py_REFCNT(code), before + 2);  // frames 0 and 1 are both f
  Py_DECREF(copy);
  EXPECT_EQ(Py_REFCNT(code), before);
  Py_DECREF(tb);
}

}  // namespace
