// tests/cpp/refcount_runs_test.cc — references taken and dropped per run of equal code objects
// (layouts/refcount_runs.h), on entry mixes Python cannot build: native entries splitting a
// run, runs at both ends, a run holding the last reference.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "layouts/refcount_runs.h"

namespace {

PyObject *fresh_code(const char *name) {
  // A code object nothing else references: compile() of a unique source.
  std::string src = std::string("def ") + name + "(): pass\n";
  return Py_CompileString(src.c_str(), name, Py_file_input);
}

callsite_raw_frame py(PyObject *code, intptr_t lasti = 0) {
  return {reinterpret_cast<uintptr_t>(code), lasti};
}
// Native entries are tagged pointers the refcount helpers must never dereference.
callsite_raw_frame native(uintptr_t fake) { return {fake | 1u, 0}; }

// Takes then drops the entries' references; checks each code object gained exactly its count
// of entries in between and is back where it started after.
void expect_counts_up_and_back(const std::vector<callsite_raw_frame> &frames, PyObject *a,
                               Py_ssize_t entries_a, PyObject *b, Py_ssize_t entries_b) {
  const Py_ssize_t ra = Py_REFCNT(a), rb = Py_REFCNT(b);
  callsite_adjust_code_refs(frames.data(), frames.size(), +1);
  EXPECT_EQ(Py_REFCNT(a), ra + entries_a);
  EXPECT_EQ(Py_REFCNT(b), rb + entries_b);
  callsite_adjust_code_refs(frames.data(), frames.size(), -1);
  EXPECT_EQ(Py_REFCNT(a), ra);
  EXPECT_EQ(Py_REFCNT(b), rb);
}

TEST(RefcountRuns, CountsEveryPythonEntryAcrossRunsAndNativeEntries) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *a = fresh_code("run_a"), *b = fresh_code("run_b");
  ASSERT_TRUE(a && b);
  const std::vector<callsite_raw_frame> frames = {
      py(a), py(a, 2), native(0x1000), native(0x1000), py(a), py(b), py(b, 4), py(a), native(0x2000)};
  expect_counts_up_and_back(frames, a, 4, b, 2);
  const Py_ssize_t ra = Py_REFCNT(a);
  callsite_adjust_code_refs(frames.data(), 0, +1);  // empty: nothing touched
  EXPECT_EQ(Py_REFCNT(a), ra);
  Py_DECREF(a);
  Py_DECREF(b);
  PyGILState_Release(g);
}

TEST(RefcountRuns, LongRunsOfEveryLengthAroundTheFourEntryBlocks) {
  // Runs of 1..13 entries alternate between two code objects, so every run end falls at each
  // position of the four-entry block test, and the last run ends the buffer.
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *a = fresh_code("block_a"), *b = fresh_code("block_b");
  ASSERT_TRUE(a && b);
  std::vector<callsite_raw_frame> frames;
  Py_ssize_t want_a = 0, want_b = 0;
  for (int len = 1; len <= 13; ++len) {
    PyObject *code = len % 2 ? a : b;
    (len % 2 ? want_a : want_b) += len;
    for (int k = 0; k < len; ++k) frames.push_back(py(code, 2 * k));
    if (len == 7) frames.push_back(native(0x3000));  // a native entry between two runs
  }
  expect_counts_up_and_back(frames, a, want_a, b, want_b);
  Py_DECREF(a);
  Py_DECREF(b);
  PyGILState_Release(g);
}

TEST(RefcountRuns, ARunHoldingTheLastReferencesFreesTheObjectOnce) {
  PyGILState_STATE g = PyGILState_Ensure();
  PyObject *code = fresh_code("run_last");
  ASSERT_TRUE(code);
  const std::vector<callsite_raw_frame> frames(5, py(code));
  callsite_adjust_code_refs(frames.data(), frames.size(), +1);
  ASSERT_EQ(Py_REFCNT(code), 6);
  Py_DECREF(code);  // the entries now hold the only 5 references
  ASSERT_EQ(Py_REFCNT(code), 5);
  // Drops 4 with one write, then Py_DECREF deallocates; ASan reports any later touch.
  callsite_adjust_code_refs(frames.data(), frames.size(), -1);
  PyGILState_Release(g);
}

}  // namespace
