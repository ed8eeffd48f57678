// tests/cpp/python_env_test.cc — the embedded interpreter the C++ suite runs in is usable.
#include <Python.h>
#include <gtest/gtest.h>

TEST(PythonEnv, IsInitialized) { EXPECT_TRUE(Py_IsInitialized()); }

TEST(PythonEnv, RunsCode) {
  ASSERT_EQ(PyRun_SimpleString("import sys\nassert sys.version_info >= (3, 10)\n"), 0);
  PyObject *sys = PyImport_ImportModule("sys");
  ASSERT_NE(sys, nullptr);
  PyObject *ver = PyObject_GetAttrString(sys, "version_info");
  ASSERT_NE(ver, nullptr);
  PyObject *major = PySequence_GetItem(ver, 0);
  ASSERT_NE(major, nullptr);
  EXPECT_EQ(PyLong_AsLong(major), PY_MAJOR_VERSION);
  Py_DECREF(major);
  Py_DECREF(ver);
  Py_DECREF(sys);
}
