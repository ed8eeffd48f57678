// tests/cpp/filter_test.cc — the filter and MLIR-text C++ APIs from an embedded interpreter:
// decisions per code object and their invalidation, the kept-frame limit, the hook contract
// the tracked windows rely on, and MLIR's escaping and location syntax.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "capture/traceback_storage.h"
#include "core/frame_refs.h"
#include "filter/decisions.h"
#include "filter/filter.h"
#include "render/mlir_text.h"
#include "python/frame_type.h"
#include "symbolize/code_info.h"

namespace {

class Filter : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_FALSE(PyErr_Occurred());
    PyErr_Clear();
  }
};

// A code object whose co_filename is `filename` (new reference).
PyObject *code_in(const char *filename) {
  PyObject *code = Py_CompileString("x = 1\n", filename, Py_file_input);
  EXPECT_NE(code, nullptr);
  return code;
}

// callsite.Filter(exclude=[...], include=[...], limit=..., default_exclusions=False).
PyObject *make_filter(std::vector<const char *> exclude, std::vector<const char *> include = {},
                      long limit = -1) {
  PyObject *ex = PyList_New(0), *in = PyList_New(0);
  for (const char *p : exclude) PyList_Append(ex, PyUnicode_FromString(p));
  for (const char *p : include) PyList_Append(in, PyUnicode_FromString(p));
  PyObject *kwargs = Py_BuildValue("{sOsOsO}", "exclude", ex, "include", in,
                                   "default_exclusions", Py_False);
  if (limit >= 0) PyDict_SetItemString(kwargs, "limit", PyLong_FromLong(limit));
  PyObject *args = PyTuple_New(0);
  PyObject *f = PyObject_Call(reinterpret_cast<PyObject *>(callsite::detail::filter_type), args, kwargs);
  Py_DECREF(args);
  Py_DECREF(kwargs);
  Py_DECREF(ex);
  Py_DECREF(in);
  EXPECT_NE(f, nullptr);
  return f;
}

callsite::RawFrame raw(PyObject *code, int lasti = 0) {
  return callsite::detail::python_raw_frame(reinterpret_cast<PyCodeObject *>(code), lasti);
}

TEST_F(Filter, IncludeWinsElseNoExcludeMatch) {
  PyObject *f = make_filter({"/lib/"}, {"keep_me"});
  PyObject *lib = code_in("/lib/other.py"), *kept = code_in("/lib/keep_me.py"),
           *user = code_in("/src/user.py");
  auto as_code = [](PyObject *c) { return reinterpret_cast<PyCodeObject *>(c); };
  EXPECT_EQ(callsite::filter_keeps(f, as_code(lib)), 0);
  EXPECT_EQ(callsite::filter_keeps(f, as_code(kept)), 1);
  EXPECT_EQ(callsite::filter_keeps(f, as_code(user)), 1);
  // The hook the tracked windows call gives the same answers.
  EXPECT_EQ(callsite::filter_keeps(f, as_code(lib)), 0);
  EXPECT_EQ(callsite::filter_keeps(f, as_code(user)), 1);
  for (PyObject *o : {f, lib, kept, user}) Py_DECREF(o);
}

TEST_F(Filter, DecisionIsCachedOnTheCodeObjectAndInvalidatedByRuleChanges) {
  PyObject *f = make_filter({});
  PyObject *code = code_in("/proj/mod.py");
  auto *c = reinterpret_cast<PyCodeObject *>(code);
  EXPECT_EQ(callsite::filter_keeps(f, c), 1);
  callsite::detail::CodeInfo *info = callsite::detail::code_info(c);
  ASSERT_NE(info, nullptr);
  ASSERT_TRUE(info->extension);  // the decision now lives with the code object
  const auto generation = callsite::filter_generation(f);
  PyObject *r = PyObject_CallMethod(f, "add_exclude", "s", "mod\\.py$");
  ASSERT_NE(r, nullptr);
  Py_DECREF(r);
  EXPECT_NE(callsite::filter_generation(f), generation);
  EXPECT_EQ(callsite::filter_keeps(f, c), 0);  // the cached "keep" was not reused
  Py_DECREF(f);
  Py_DECREF(code);
}

TEST_F(Filter, LimitCountsKeptFramesAndTheWalkGoesPastDroppedOnes) {
  PyObject *f = make_filter({"drop"}, {}, 2);
  PyObject *drop = code_in("/x/drop.py"), *keep = code_in("/x/keep.py");
  const callsite::RawFrame frames[] = {raw(drop, 2), raw(drop, 4), raw(keep, 6), raw(drop, 8),
                                    raw(keep, 10), raw(keep, 12)};
  callsite::RawFrame out[6];
  EXPECT_EQ(callsite::filter_frames(f, frames, 6, out), 2u);
  EXPECT_EQ(out[0], frames[2]);
  EXPECT_EQ(out[1], frames[4]);
  EXPECT_EQ(callsite::filter_frames(f, frames, 6, out, 1), 1u);  // the smaller limit wins
  EXPECT_EQ(callsite::filter_limit(f), 2u);
  PyObject *tb = callsite::filtered_traceback(f, frames, 6, SIZE_MAX);
  ASSERT_NE(tb, nullptr);
  ASSERT_EQ(callsite::traceback_size(tb), 2u);
  EXPECT_EQ(callsite::traceback_frames(tb)[1], frames[4]);
  const Py_ssize_t refs = Py_REFCNT(keep);
  Py_DECREF(tb);  // the Traceback owned one reference per kept frame
  EXPECT_EQ(Py_REFCNT(keep), refs - 2);
  for (PyObject *o : {f, drop, keep}) Py_DECREF(o);
}

TEST_F(Filter, NotAFilterIsATypeError) {
  PyObject *code = code_in("/x/a.py");
  EXPECT_EQ(callsite::filter_keeps(Py_None, reinterpret_cast<PyCodeObject *>(code)), -1);
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_TypeError));
  PyErr_Clear();
  EXPECT_EQ(callsite::filter_limit(code), SIZE_MAX);
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_TypeError));
  PyErr_Clear();
  const callsite::RawFrame frames[] = {raw(code)};
  EXPECT_EQ(callsite::filtered_traceback(code, frames, 1, SIZE_MAX), nullptr);
  EXPECT_TRUE(PyErr_ExceptionMatches(PyExc_TypeError));
  PyErr_Clear();
  EXPECT_FALSE(callsite::is_filter(code));
  Py_DECREF(code);
}

TEST_F(Filter, DefaultFilterExcludesGeneratedOpModules) {
  PyObject *f = callsite::default_filter();
  ASSERT_NE(f, nullptr);
  EXPECT_TRUE(callsite::is_filter(f));
  PyObject *gen = code_in("/site/mlir/dialects/_arith_ops_gen.py");
  PyObject *hand = code_in("/site/mlir/dialects/arith.py");
  EXPECT_EQ(callsite::filter_keeps(f, reinterpret_cast<PyCodeObject *>(gen)), 0);
  EXPECT_EQ(callsite::filter_keeps(f, reinterpret_cast<PyCodeObject *>(hand)), 1);
  EXPECT_EQ(callsite::filter_limit(f), 10u);
  Py_DECREF(gen);
  Py_DECREF(hand);
}

std::string escaped(const std::string &s) {
  std::string out;
  callsite::append_mlir_escaped(out, s.data(), s.size());
  return out;
}

TEST(MlirText, EscapingIsLlvmPrintEscapedString) {
  EXPECT_EQ(escaped("plain/path.py"), "plain/path.py");
  EXPECT_EQ(escaped("a\"b"), "a\\22b");
  EXPECT_EQ(escaped("a\\b"), "a\\\\b");
  EXPECT_EQ(escaped("a\nb\t"), "a\\0Ab\\09");
  EXPECT_EQ(escaped("\xC3\xA9"), "\\C3\\A9");  // UTF-8 bytes, upper-case hex
  EXPECT_EQ(escaped(std::string("\x7F\x1F ~", 4)), "\\7F\\1F ~");
  EXPECT_EQ(escaped(std::string("\0", 1)), "\\00");
}

TEST_F(Filter, LocationTextShapes) {
  PyObject *code = Py_CompileString("def f():\n    return 1\n", "/p/m.py", Py_file_input);
  ASSERT_NE(code, nullptr);
  const callsite::RawFrame frames[] = {raw(code, 0), raw(code, 2)};
  std::string text;
  ASSERT_TRUE(callsite::mlir_location_text(frames, 0, &text));
  EXPECT_EQ(text, "loc(unknown)");
  ASSERT_TRUE(callsite::mlir_location_text(frames, 1, &text));
  EXPECT_EQ(text.rfind("loc(\"<module>\"(\"/p/m.py\":", 0), 0u) << text;
  EXPECT_EQ(text.find("callsite"), std::string::npos);
  ASSERT_TRUE(callsite::mlir_location_text(frames, 2, &text));
  EXPECT_EQ(text.rfind("loc(callsite(\"<module>\"(\"/p/m.py\":", 0), 0u) << text;
  EXPECT_NE(text.find(" at \"<module>\"(\"/p/m.py\":"), std::string::npos) << text;
  EXPECT_EQ(text.substr(text.size() - 3), ")))");

  callsite::FrameInfo info;
  info.filename = PyUnicode_FromString("f.py");
  info.name = info.qualname = PyUnicode_FromString("q");
  info.lineno = 3, info.end_lineno = 3, info.colno = 4, info.end_colno = 4;
  std::string one;
  ASSERT_TRUE(callsite::append_mlir_frame(one, info));
#if PY_VERSION_HEX >= 0x030B0000
  EXPECT_EQ(one, "\"q\"(\"f.py\":3:4)");  // an empty range prints as a point
  info.end_colno = 9;
  one.clear();
  ASSERT_TRUE(callsite::append_mlir_frame(one, info));
  EXPECT_EQ(one, "\"q\"(\"f.py\":3:4 to :9)");
  info.end_lineno = 5;
  one.clear();
  ASSERT_TRUE(callsite::append_mlir_frame(one, info));
  EXPECT_EQ(one, "\"q\"(\"f.py\":3:4 to 5:9)");
  info.colno = info.end_colno = -1, info.end_lineno = 3;
  one.clear();
  ASSERT_TRUE(callsite::append_mlir_frame(one, info));
  EXPECT_EQ(one, "\"q\"(\"f.py\":3:4294967295)");  // MLIR gets -1 as unsigned
#else
  EXPECT_EQ(one, "\"q\"(\"f.py\":3:0)");  // 3.10: FileLineColLoc(file, line, 0)
#endif
  Py_DECREF(info.filename);
  Py_DECREF(info.name);
  Py_DECREF(code);
}

}  // namespace
