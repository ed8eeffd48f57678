// tests/cpp/python_env.cc — a GoogleTest environment that owns the embedded interpreter.
#include <Python.h>
#include <gtest/gtest.h>

namespace {

class PythonEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    // Leave signal handling to gtest and the sanitizers.
    Py_InitializeEx(0);
    ASSERT_TRUE(Py_IsInitialized());
  }
  void TearDown() override {
    if (Py_IsInitialized()) EXPECT_EQ(Py_FinalizeEx(), 0);
  }
};

// gtest owns (and deletes) registered environments.
[[maybe_unused]] ::testing::Environment *const python_env =
    ::testing::AddGlobalTestEnvironment(new PythonEnvironment);

}  // namespace
