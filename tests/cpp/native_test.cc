// tests/cpp/native_test.cc — callsite::NativeFrame from C++: the shadow stack (order, out-of-order
// pops in both modes, threads with and without a Python thread state), interleaving with real
// Python frames, C++ reifiers (laziness, cache, failures) and traceback entries.
#include <gtest/gtest.h>

#include <optional>
#include <thread>
#include <vector>

#include "capture/traceback_storage.h"
#include "core/frame_refs.h"
#include "callsite/api.h"
#include "capture/capture.h"
#include "callsite/native_frame.h"
#include "native/reify.h"
#include "native/shadow_stack.h"
#include "python/frame_type.h"
#include "symbolize/symbolize.h"
#include "symbolize/code_info.h"

namespace {

namespace nv = callsite::native;

int g_reified = 0;
int reify_line(const callsite::Executable *, std::uintptr_t state,
               callsite::NativeLocation *out) noexcept {
  ++g_reified;
  out->filename = "cpp.dsl";
  out->lineno = out->end_lineno = int(state);
  out->colno = 1;
  out->end_colno = 4;
  return 0;
}
int reify_fail(const callsite::Executable *, std::uintptr_t, callsite::NativeLocation *) noexcept {
  return -1;
}
int reify_no_file(const callsite::Executable *, std::uintptr_t, callsite::NativeLocation *) noexcept {
  return 0;
}

const callsite::Executable kA{"a", "jit", &reify_line};
const callsite::Executable kB{"b", "jit", &reify_line};
const callsite::Executable kFail{"fail", "jit", &reify_fail};
const callsite::Executable kNoFile{"nofile", "jit", &reify_no_file};

class Native : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(nv::this_thread()->head, nullptr); }
  void TearDown() override {
    EXPECT_EQ(nv::this_thread()->head, nullptr);
    EXPECT_FALSE(PyErr_Occurred());
    PyErr_Clear();
  }
};

TEST_F(Native, TableIsInstalledInsideCallsite) {
  ASSERT_NE(callsite::detail::native_api, nullptr);
  EXPECT_EQ(callsite::detail::native_api->version, unsigned(CALLSITE_ABI_MAJOR));
  EXPECT_EQ(callsite::detail::native_api->size, sizeof(callsite::NativeAPI));
  EXPECT_TRUE(callsite::api::available());
}

TEST_F(Native, PushPopIsAStack) {
  {
    callsite::NativeFrame a(kA, 1);
    const callsite::NativeLink *head = nv::this_thread()->head;
    EXPECT_EQ(head, &a.link());
    {
      callsite::NativeFrame b(kB, 2);
      EXPECT_EQ(nv::this_thread()->head, &b.link());
      EXPECT_EQ(b.link().previous, &a.link());
      EXPECT_EQ(b.link().marker, nullptr);  // no Python frame runs here
      b.set_state(7);
      EXPECT_EQ(nv::this_thread()->head->state, 7u);
    }
    EXPECT_EQ(nv::this_thread()->head, &a.link());
    a.pop();
    a.pop();  // idempotent
    EXPECT_EQ(nv::this_thread()->head, nullptr);
  }
}

// Raw links through the table, so the test means the same in Debug and Release builds
// (NativeFrame's destructor would apply CALLSITE_NATIVE_CHECKS of this build).
TEST_F(Native, OutOfOrderPopUnlinksWhenUnchecked) {
  const callsite::NativeAPI *api = callsite::detail::native_api;
  callsite::NativeLink a, b, c;
  callsite::ThreadStack *stack = api->push(&a, &kA, 1);
  ASSERT_EQ(api->push(&b, &kB, 2), stack);
  ASSERT_EQ(api->push(&c, &kA, 3), stack);
  api->misordered_pop(stack, &b, /*checked=*/0);
  EXPECT_EQ(stack->head, &c);
  EXPECT_EQ(c.previous, &a);
  api->misordered_pop(stack, &b, 0);  // no longer on the stack: ignored
  EXPECT_EQ(stack->head, &c);
  api->misordered_pop(stack, &a, 0);  // the outermost, under a live frame
  EXPECT_EQ(c.previous, nullptr);
  EXPECT_EQ(stack->head, &c);
  stack->head = const_cast<callsite::NativeLink *>(c.previous);  // the inline, in-order pop
  EXPECT_EQ(stack->head, nullptr);
}

void pop_outer_checked() {
  callsite::NativeFrame a(kA, 1);
  callsite::NativeFrame b(kB, 2);
  callsite::detail::native_api->misordered_pop(nv::this_thread(),
                                            const_cast<callsite::NativeLink *>(&a.link()), 1);
}
void pop_stray_checked() {
  callsite::NativeLink stray{nullptr, nullptr, &kB, 0};
  callsite::detail::native_api->misordered_pop(nv::this_thread(), &stray, 1);
}

TEST_F(Native, OutOfOrderPopAbortsWhenChecked) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(pop_outer_checked(), "native frame 'a' popped out of order: 'b' was pushed after");
  EXPECT_DEATH(pop_stray_checked(), "not on this thread's stack");
}

TEST_F(Native, ThreadsHaveTheirOwnStacks) {
  callsite::NativeFrame mine(kA, 1);
  std::vector<const callsite::NativeLink *> seen;
  // No Python thread state on this thread, no GIL: push/pop still work, with no marker.
  Py_BEGIN_ALLOW_THREADS;
  std::thread t([&] {
    callsite::NativeFrame theirs(kB, 2);
    seen.push_back(nv::this_thread()->head);
    seen.push_back(theirs.link().previous);
    seen.push_back(static_cast<const callsite::NativeLink *>(theirs.link().marker));
  });
  t.join();
  Py_END_ALLOW_THREADS;
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_NE(seen[0], nullptr);
  EXPECT_EQ(seen[1], nullptr);  // not the main thread's frame
  EXPECT_EQ(seen[2], nullptr);
  EXPECT_EQ(nv::this_thread()->head, &mine.link());
}

// probe(cb): a native frame of kA around a call back into Python.
PyObject *probe(PyObject *, PyObject *cb) {
  callsite::NativeFrame frame(kA, 33);
  PyObject *r = PyObject_CallNoArgs(cb);
  if (!r) return frame.add_traceback();
  return r;
}
PyMethodDef probe_def = {"probe", probe, METH_O, nullptr};

std::vector<callsite::RawFrame> g_raw;
PyObject *record(PyObject *, PyObject *) {
  callsite::RawFrame buf[16];
  const std::size_t n = callsite::capture_raw(buf, 16);
  g_raw.assign(buf, buf + std::min<std::size_t>(n, 16));
  Py_RETURN_NONE;
}
PyMethodDef record_def = {"record", record, METH_NOARGS, nullptr};

PyObject *run(const char *source) {
  PyObject *globals = PyDict_New();
  PyObject *p = PyCFunction_New(&probe_def, nullptr), *r = PyCFunction_New(&record_def, nullptr);
  PyDict_SetItemString(globals, "probe", p);
  PyDict_SetItemString(globals, "record", r);
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  Py_DECREF(p);
  Py_DECREF(r);
  PyObject *result = PyRun_String(source, Py_file_input, globals, globals);
  Py_DECREF(globals);
  return result;
}

TEST_F(Native, InterleavesWithPythonFrames) {
  for (auto backend : {callsite::Backend::internal, callsite::Backend::public_api}) {
    if (!callsite::set_backend(backend)) continue;
    g_raw.clear();
    PyObject *done = run("def inner():\n    record()\n"
                         "def outer():\n    probe(inner)\n"
                         "outer()\n");
    ASSERT_NE(done, nullptr);
    Py_DECREF(done);
    ASSERT_GE(g_raw.size(), 4u);
    // inner (Python) → the native frame → outer (Python) → <module>
    EXPECT_TRUE(g_raw[0].is_python());
    ASSERT_FALSE(g_raw[1].is_python());
    EXPECT_EQ(g_raw[1].executable(), &kA);
    EXPECT_EQ(g_raw[1].state(), 33u);
    EXPECT_TRUE(g_raw[2].is_python());
    EXPECT_TRUE(g_raw[3].is_python());
    EXPECT_STREQ(PyUnicode_AsUTF8(static_cast<PyCodeObject *>(g_raw[2].code())->co_name),
                 "outer");
  }
}

TEST_F(Native, ReifierRunsOnceThenTheCacheAnswers) {
  const int before = g_reified;
  const callsite::RawFrame raw = callsite::detail::native_raw_frame(&kB, 12345);
  callsite::FrameInfo info, again;
  ASSERT_TRUE(callsite::symbolize(raw, &info));
  ASSERT_TRUE(callsite::symbolize(raw, &again));
  EXPECT_EQ(g_reified, before + 1);
  EXPECT_EQ(info.kind, callsite::FrameKind::native);
  EXPECT_STREQ(PyUnicode_AsUTF8(info.filename), "cpp.dsl");
  EXPECT_STREQ(PyUnicode_AsUTF8(info.name), "b");  // defaulted to the executable's name
  EXPECT_EQ(info.qualname, info.name);
  EXPECT_EQ(info.filename, again.filename);  // the same cached object
  EXPECT_EQ(info.lineno, 12345);
  EXPECT_EQ(info.colno, 1);
  EXPECT_EQ(info.end_colno, 4);
  EXPECT_EQ(info.code, nullptr);
}

TEST_F(Native, FailingReifiersGiveAPlaceholder) {
  PyObject *warnings = PyImport_ImportModule("warnings");
  ASSERT_NE(warnings, nullptr);
  PyObject *r = PyObject_CallMethod(warnings, "simplefilter", "s", "ignore");
  Py_XDECREF(r);
  for (const callsite::Executable *exe : {&kFail, &kNoFile}) {
    const callsite::RawFrame raw = callsite::detail::native_raw_frame(exe, 1);
    callsite::FrameInfo info;
    ASSERT_TRUE(callsite::symbolize(raw, &info));
    EXPECT_EQ(PyUnicode_CompareWithASCIIString(
                  info.filename, exe == &kFail ? "<jit:fail>" : "<jit:nofile>"),
              0);
    EXPECT_EQ(info.lineno, -1);
  }
  r = PyObject_CallMethod(warnings, "resetwarnings", nullptr);
  Py_XDECREF(r);
  Py_DECREF(warnings);
}

TEST_F(Native, AddTracebackPrependsAnEntry) {
  EXPECT_EQ(callsite::detail::native_api->add_traceback(&kA, 5), -1);  // nothing raised
  PyErr_SetString(PyExc_ValueError, "boom");
  ASSERT_EQ(callsite::detail::native_api->add_traceback(&kA, 5), 0);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  ASSERT_NE(tb, nullptr);
  auto *entry = reinterpret_cast<PyTracebackObject *>(tb);
  EXPECT_EQ(entry->tb_lineno, 5);
  PyCodeObject *code = PyFrame_GetCode(entry->tb_frame);
  EXPECT_STREQ(PyUnicode_AsUTF8(code->co_filename), "cpp.dsl");
  EXPECT_STREQ(PyUnicode_AsUTF8(code->co_name), "a");
  Py_DECREF(code);
  EXPECT_EQ(PyErr_GivenExceptionMatches(type, PyExc_ValueError), 1);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
}

TEST_F(Native, ExceptionThroughANativeFrameFromPython) {
  PyObject *done = run("def bad():\n    raise KeyError('k')\n"
                       "import traceback\n"
                       "try:\n    probe(bad)\nexcept KeyError as e:\n"
                       "    names = [f.name for f in traceback.extract_tb(e.__traceback__)]\n"
                       "    assert names == ['<module>', 'a', 'bad'], names\n");
  if (!done) PyErr_Print();
  ASSERT_NE(done, nullptr);
  Py_DECREF(done);
}

TEST_F(Native, NoCallsiteMeansANoOpFrame) {
  const callsite::NativeAPI *saved = callsite::detail::native_api;
  callsite::detail::native_api = nullptr;
  {
    callsite::NativeFrame frame(kA, 1);
    frame.set_state(2);
    EXPECT_EQ(nv::this_thread()->head, nullptr);
    EXPECT_EQ(frame.add_traceback(), nullptr);
  }
  callsite::detail::native_api = saved;
}

}  // namespace

// --- locals reifiers ----------------------------------------------------------------------------

struct LocalsCount {
  int calls = 0;
  double value = 0;
};

PyObject *count_locals(const callsite::Executable *, std::uintptr_t state, void *context) {
  auto *c = static_cast<LocalsCount *>(context);
  ++c->calls;
  return Py_BuildValue("{s:K,s:d}", "pc", (unsigned long long)state, "v", c->value);
}

const callsite::Executable kLocals{"with_locals", "jit", &reify_line};

TEST_F(Native, LocalsReifierRunsOnlyWhenAnExceptionEntryIsMade) {
  LocalsCount count;
  ASSERT_TRUE(callsite::api::set_locals(kLocals, &count_locals, &count));
  {
    callsite::NativeFrame frame(kLocals, 0);
    for (std::uintptr_t k = 0; k < 1000000; ++k) frame.set_state(k);
  }
  for (int i = 0; i < 1000000; ++i) callsite::NativeFrame frame(kLocals, std::uintptr_t(i));
  EXPECT_EQ(count.calls, 0);
  count.value = 2.5;
  {
    callsite::NativeFrame frame(kLocals, 7);
    PyErr_SetString(PyExc_ValueError, "boom");
    frame.add_traceback();
  }
  EXPECT_EQ(count.calls, 1);
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  ASSERT_NE(tb, nullptr);
  PyObject *locals = PyObject_GetAttrString(
      reinterpret_cast<PyObject *>(reinterpret_cast<PyTracebackObject *>(tb)->tb_frame), "f_locals");
  ASSERT_NE(locals, nullptr);
  PyObject *v = PyMapping_GetItemString(locals, "v");
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(PyFloat_AsDouble(v), 2.5);
  PyObject *pc = PyMapping_GetItemString(locals, "pc");
  ASSERT_NE(pc, nullptr);
  EXPECT_EQ(PyLong_AsLong(pc), 7);
  Py_DECREF(pc);
  Py_DECREF(v);
  Py_DECREF(locals);
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  ASSERT_TRUE(callsite::api::set_locals(kLocals, nullptr));
}

TEST_F(Native, NativeFrameWithLocalsPushesWithoutTheGil) {
  LocalsCount env;
  env.value = 1;
  int pushed = 0;
  // No Python thread state on this thread, no GIL: as a plain NativeFrame's, the push and pop
  // (with the registration of its reifier and its removal) touch no Python state.
  Py_BEGIN_ALLOW_THREADS;
  std::thread t([&] {
    for (int i = 0; i < 1000; ++i) {
      callsite::NativeFrameWithLocals frame(kB, std::uintptr_t(i), nullptr, &count_locals, &env);
      pushed += nv::this_thread()->head == &frame.link();
    }
  });
  t.join();
  Py_END_ALLOW_THREADS;
  EXPECT_EQ(pushed, 1000);
  EXPECT_EQ(env.calls, 0);
}

TEST_F(Native, NativeFrameWithLocalsServesItsOwnFrameWhileItIsPushed) {
  LocalsCount env;
  env.value = 4;
  PyObject *entry = nullptr;
  {
    callsite::NativeFrameWithLocals frame(kA, 3, nullptr, &count_locals, &env);
    PyObject *tb = callsite::api::capture();
    ASSERT_NE(tb, nullptr);
    entry = PySequence_GetItem(tb, 0);
    Py_DECREF(tb);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(env.calls, 0);  // a capture reads no variables
    PyObject *locals = PyObject_GetAttrString(entry, "locals");
    ASSERT_NE(locals, nullptr);
    PyObject *v = PyDict_GetItemString(locals, "v");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(PyFloat_AsDouble(v), 4.0);
    Py_DECREF(locals);
    EXPECT_EQ(env.calls, 1);
  }
  // Popped: the frame's reifier is forgotten; kA has none of its own.
  PyObject *locals = PyObject_GetAttrString(entry, "locals");
  EXPECT_EQ(locals, Py_None);
  Py_XDECREF(locals);
  Py_DECREF(entry);
  EXPECT_EQ(env.calls, 1);
}
