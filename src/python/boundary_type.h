// python/boundary_type.h — callsite.boundary: the kernel boundary as a context manager (the
// state and the walk's stop are in capture/boundary.h).
#pragma once
#include <Python.h>

namespace callsite::detail {

extern PyTypeObject *boundary_type;

PyTypeObject *init_boundary_type() noexcept;

}  // namespace callsite::detail
