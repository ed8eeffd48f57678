// native/api_table.h — the C API function table (callsite/api.h) and its capsule.
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::native {

const NativeAPI *api_table() noexcept;

/// The capsule other extensions import as callsite._callsite._C_API (new reference).
PyObject *new_api_capsule() noexcept;

}  // namespace callsite::native
