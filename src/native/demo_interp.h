// native/demo_interp.h — the example interpreter (examples/interp/) built into _callsite.
#pragma once
#include <Python.h>

namespace callsite::native {

/// A new reference to the calc Program type, or nullptr + error.
PyTypeObject *calc_program_type() noexcept;

}  // namespace callsite::native
