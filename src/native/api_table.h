// native/api_table.h — the C API function table (locus/api.h) and its capsule.
#pragma once
#include <Python.h>

#include "locus/native_frame.h"

namespace locus::native {

const NativeAPI *api_table() noexcept;

/// The capsule other extensions import as locus._locus._C_API (new reference).
PyObject *new_api_capsule() noexcept;

}  // namespace locus::native
