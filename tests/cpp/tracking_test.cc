// tests/cpp/tracking_test.cc — the window ring (order, wrap, resize, references) and the C++
// tracking API from an embedded interpreter, including threads made outside `threading`.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "capture/traceback_storage.h"
#include "core/compat.h"
#include "tracking/tracking.h"
#include "python/frame_type.h"
#include "symbolize/code_info.h"
#include "tracking/window.h"
#include "tracking/state.h"

namespace {

namespace tr = callsite::tracking;
using tr::detail::Window;

class Tracking : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_TRUE(tr::disable());
    EXPECT_FALSE(PyErr_Occurred());
    PyErr_Clear();
  }
};

PyCodeObject *new_code(const char *name) {
  PyCodeObject *code = PyCode_NewEmpty("<tracking-test>", name, 1);
  EXPECT_NE(code, nullptr);
  return code;
}

TEST_F(Tracking, RingKeepsTheLastNMostRecentFirstAndOwnsReferences) {
  std::vector<PyCodeObject *> codes;
  for (int i = 0; i < 5; ++i) codes.push_back(new_code(("c" + std::to_string(i)).c_str()));
  std::vector<Py_ssize_t> base;
  for (auto *c : codes) base.push_back(Py_REFCNT(c));

  Window *r = tr::detail::new_window(callsite::compat::current_tstate(), 3);
  ASSERT_NE(r, nullptr);
  for (int i = 0; i < 5; ++i) tr::detail::push(r, codes[i], 10 * i, i % 2 ? codes[0] : nullptr);
  EXPECT_EQ(r->count, 3u);
  // Holds c2, c3, c4 as callers; c0 as callee of the odd ones (c3).
  EXPECT_EQ(Py_REFCNT(codes[1]), base[1]);
  EXPECT_EQ(Py_REFCNT(codes[4]), base[4] + 1);
  EXPECT_EQ(Py_REFCNT(codes[0]), base[0] + 1);

  tr::detail::OwnedCallSite out[8];
  const std::size_t n = tr::detail::copy_recent(r, 0, out, 8);
  ASSERT_EQ(n, 3u);
  EXPECT_EQ(out[0].code, codes[4]);
  EXPECT_EQ(out[0].offset, 40);
  EXPECT_EQ(out[1].code, codes[3]);
  EXPECT_EQ(out[1].callee, codes[0]);
  EXPECT_EQ(out[2].code, codes[2]);
  EXPECT_EQ(Py_REFCNT(codes[4]), base[4] + 2);  // the copy holds its own references
  tr::detail::release_copies(out, n);
  EXPECT_EQ(tr::detail::copy_recent(r, 2, out, 8), 1u);
  EXPECT_EQ(out[0].code, codes[2]);
  tr::detail::release_copies(out, 1);

  // Same code object pushed repeatedly: one reference per slot, not per push.
  for (int i = 0; i < 10; ++i) tr::detail::push(r, codes[1], i, nullptr);
  EXPECT_EQ(Py_REFCNT(codes[1]), base[1] + 3);
  EXPECT_EQ(Py_REFCNT(codes[4]), base[4]);

  tr::detail::clear(r);
  EXPECT_EQ(r->count, 0u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(Py_REFCNT(codes[i]), base[i]) << i;
  Py_DECREF(r);
  for (auto *c : codes) Py_DECREF(c);
}

TEST_F(Tracking, ResizeKeepsTheMostRecentInOrderAndDeallocReleases) {
  std::vector<PyCodeObject *> codes;
  for (int i = 0; i < 6; ++i) codes.push_back(new_code(("r" + std::to_string(i)).c_str()));
  const Py_ssize_t base = Py_REFCNT(codes[0]);
  Window *r = tr::detail::new_window(callsite::compat::current_tstate(), 4);
  ASSERT_NE(r, nullptr);
  const std::size_t live = tr::detail::window_count();
  for (int i = 0; i < 6; ++i) tr::detail::push(r, codes[i], i, nullptr);  // holds 2..5
  ASSERT_TRUE(tr::detail::resize(r, 2));                                  // keeps 4, 5
  tr::detail::OwnedCallSite out[4];
  ASSERT_EQ(tr::detail::copy_recent(r, 0, out, 4), 2u);
  EXPECT_EQ(out[0].code, codes[5]);
  EXPECT_EQ(out[1].code, codes[4]);
  tr::detail::release_copies(out, 2);
  EXPECT_EQ(Py_REFCNT(codes[2]), base);
  ASSERT_TRUE(tr::detail::resize(r, 5));
  tr::detail::push(r, codes[0], 0, nullptr);
  ASSERT_EQ(tr::detail::copy_recent(r, 0, out, 4), 3u);
  EXPECT_EQ(out[0].code, codes[0]);
  EXPECT_EQ(out[1].code, codes[5]);
  EXPECT_EQ(out[2].code, codes[4]);
  tr::detail::release_copies(out, 3);

  tr::detail::cache_tstate = r->tstate;
  tr::detail::cache_window = r;
  Py_DECREF(r);  // dealloc: releases entries, unregisters, resets the cache
  EXPECT_EQ(tr::detail::window_count(), live - 1);
  EXPECT_EQ(tr::detail::cache_window, nullptr);
  for (auto *c : codes) EXPECT_EQ(Py_REFCNT(c), base);
  for (auto *c : codes) Py_DECREF(c);
}

// Runs `src` (defining and calling functions) in a fresh namespace; returns it (new ref).
PyObject *run(const char *src) {
  PyObject *globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject *res = PyRun_String(src, Py_file_input, globals, globals);
  EXPECT_NE(res, nullptr);
  if (!res) PyErr_Print();
  Py_XDECREF(res);
  return globals;
}

PyObject *probe_result = nullptr;
// A C function the Python code calls: it reads the window from C++ (as an op builder would).
PyObject *probe(PyObject *, PyObject *) {
  tr::CallSite sites[4];
  const std::ptrdiff_t n = tr::window(sites, 4);
  if (n < 0) return nullptr;
  PyObject *names = PyList_New(0);
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    auto *code = static_cast<PyCodeObject *>(sites[i].site.code());
    PyObject *item = Py_BuildValue("(OO)", code->co_name,
                                   sites[i].callee ? sites[i].callee->co_name : Py_None);
    PyList_Append(names, item);
    Py_DECREF(item);
  }
  Py_XSETREF(probe_result, names);
  Py_RETURN_NONE;
}
PyMethodDef probe_def = {"probe", probe, METH_NOARGS, nullptr};

const char *kScript =
    "def leaf():\n    return 1\n"
    "def mid():\n    leaf()\n    probe()\n"
    "def top():\n    mid()\n"
    "top()\n";

void run_script_with_probe() {
  PyObject *globals = PyDict_New();
  PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins());
  PyObject *fn = PyCFunction_New(&probe_def, nullptr);
  PyDict_SetItemString(globals, "probe", fn);
  Py_DECREF(fn);
  PyObject *res = PyRun_String(kScript, Py_file_input, globals, globals);
  if (!res) PyErr_Print();
  EXPECT_NE(res, nullptr);
  Py_XDECREF(res);
  Py_DECREF(globals);
}

std::string repr(PyObject *o) {
  PyObject *r = PyObject_Repr(o);
  std::string s = r ? PyUnicode_AsUTF8(r) : "<error>";
  Py_XDECREF(r);
  return s;
}

TEST_F(Tracking, WindowFromCxxInEachAvailableMode) {
  for (tr::Mode mode : {tr::Mode::profile, tr::Mode::monitoring}) {
    if (!tr::available(mode)) continue;
    tr::Settings s;
    s.mode = mode;
    s.window = 4;
    ASSERT_TRUE(tr::enable(s)) << int(mode);
    EXPECT_EQ(tr::settings().mode, mode);
    Py_CLEAR(probe_result);
    run_script_with_probe();
    ASSERT_NE(probe_result, nullptr);
    // Most recent first: probe() from mid, leaf() from mid, mid() from top, top() from module.
    EXPECT_EQ(repr(probe_result),
              "[('mid', None), ('mid', 'leaf'), ('top', 'mid'), ('<module>', 'top')]")
        << int(mode);
    ASSERT_TRUE(tr::disable());
    tr::CallSite sites[1];
    EXPECT_EQ(tr::window(sites, 1), -1);
    ASSERT_TRUE(PyErr_ExceptionMatches(PyExc_RuntimeError));
    PyErr_Clear();
  }
  Py_CLEAR(probe_result);
}

TEST_F(Tracking, BadSettingsAreRefused) {
  tr::Settings s;
  s.mode = tr::Mode::profile;
  s.window = 0;
  EXPECT_FALSE(tr::enable(s));
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_ValueError));
  PyErr_Clear();
  s.window = tr::kMaxWindow + 1;
  EXPECT_FALSE(tr::enable(s));
  PyErr_Clear();
  s.window = 8;
  s.tool_id = 2;  // profile mode has no tool id
  EXPECT_FALSE(tr::enable(s));
  PyErr_Clear();
  s.mode = tr::Mode::off;
  EXPECT_FALSE(tr::enable(s));
  PyErr_Clear();
  EXPECT_EQ(tr::settings().mode, tr::Mode::off);
}

// A thread created outside `threading` (PyGILState_Ensure): monitoring mode covers it, its
// ring lives in its thread-state dict, and PyGILState_Release (which clears and deletes the
// thread state) frees the ring and its code references — with the GIL, on that thread.
TEST_F(Tracking, ForeignThreadEndReleasesItsWindow) {
  if (!tr::available(tr::Mode::monitoring)) GTEST_SKIP() << "sys.monitoring needs 3.12+";
  tr::Settings s;
  s.mode = tr::Mode::monitoring;
  ASSERT_TRUE(tr::enable(s));
  PyObject *ns = run("def callee():\n    return 0\ndef caller():\n    callee()\n");
  PyObject *caller = PyDict_GetItemString(ns, "caller");
  PyObject *code = PyObject_GetAttrString(caller, "__code__");
  const Py_ssize_t before = Py_REFCNT(code);
  const std::size_t windows_before = tr::detail::window_count();
  Py_ssize_t during = 0;
  std::size_t windows_during = 0;

  Py_BEGIN_ALLOW_THREADS
  std::thread t([&] {
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *res = PyObject_CallNoArgs(caller);
    Py_XDECREF(res);
    during = Py_REFCNT(code);  // the window's callee/caller entries hold it
    windows_during = tr::detail::window_count();
    PyGILState_Release(g);
  });
  t.join();
  Py_END_ALLOW_THREADS

  EXPECT_GT(during, before);
  EXPECT_EQ(windows_during, windows_before + 1);
  EXPECT_EQ(Py_REFCNT(code), before);
  EXPECT_EQ(tr::detail::window_count(), windows_before);
  Py_DECREF(code);
  Py_DECREF(ns);
}

// Profile mode covers threads that existed at enable() and threading's later ones; a foreign
// thread started afterwards is not covered and says so.
TEST_F(Tracking, ProfileModeRefusesAnUncoveredForeignThread) {
  tr::Settings s;
  s.mode = tr::Mode::profile;
  ASSERT_TRUE(tr::enable(s));
  std::string message;
  Py_BEGIN_ALLOW_THREADS
  std::thread t([&] {
    PyGILState_STATE g = PyGILState_Ensure();
    tr::CallSite sites[1];
    if (tr::window(sites, 1) < 0) {
      PyObject *type, *value, *tb;
      PyErr_Fetch(&type, &value, &tb);
      message = value ? repr(value) : "";
      Py_XDECREF(type);
      Py_XDECREF(value);
      Py_XDECREF(tb);
    }
    PyGILState_Release(g);
  });
  t.join();
  Py_END_ALLOW_THREADS
  EXPECT_NE(message.find("not tracked"), std::string::npos) << message;
}

}  // namespace
