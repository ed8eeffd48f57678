// tests/cpp/python_env.cc — a GoogleTest environment that owns the embedded interpreter and
// creates callsite's types once, in the same order as the module.
#include <Python.h>
#include <gtest/gtest.h>

#include "python/init.h"

namespace {

class PythonEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    // Leave signal handling to gtest and the sanitizers.
    Py_InitializeEx(0);
    ASSERT_TRUE(Py_IsInitialized());
    // The module's init order, minus the backend choice (made at import, with Python frames
    // on the stack; here the public walk stays active until a test selects one).
    ASSERT_TRUE(callsite::python::init_types());
  }
  void TearDown() override {
    if (Py_IsInitialized()) EXPECT_EQ(Py_FinalizeEx(), 0);
  }
};

// gtest owns (and deletes) registered environments.
[[maybe_unused]] ::testing::Environment *const python_env =
    ::testing::AddGlobalTestEnvironment(new PythonEnvironment);

}  // namespace
