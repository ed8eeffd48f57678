// native/demo_interp.h — the example interpreter (examples/interp/) built into _locus.
#pragma once
#include <Python.h>

namespace locus::native {

/// A new reference to the calc Program type, or nullptr + error.
PyTypeObject *calc_program_type() noexcept;

}  // namespace locus::native
