// python/traceback_type.h — the callsite.Traceback type (storage: capture/traceback_storage.h).
#pragma once
#include <Python.h>

namespace callsite::detail {

/// Creates the type (once) and records it as capture's traceback_type. nullptr + error.
PyTypeObject *init_traceback_type() noexcept;

}  // namespace callsite::detail
