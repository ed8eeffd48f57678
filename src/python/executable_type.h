// python/executable_type.h — the callsite.native.Executable type (methods: frame, reify).
#pragma once
#include <Python.h>

namespace callsite::native {

/// Creates the type (once) and records it as native::executable_type. nullptr + error.
PyTypeObject *init_executable_type() noexcept;

}  // namespace callsite::native
