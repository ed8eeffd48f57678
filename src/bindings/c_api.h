// bindings/c_api.h — the C API function table (callsite/api.h) and its capsule.
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::bindings {

/// The table _callsite exports; installed as detail::native_api when this file is linked in,
/// so NativeFrames created inside the module (and the C++ tests) use it too.
const NativeAPI *api_table() noexcept;

/// The capsule other extensions import as callsite._callsite._C_API (new reference).
PyObject *new_api_capsule() noexcept;

}  // namespace callsite::bindings
