// python/boundary_type.h — callsite.boundary: the kernel boundary as a context manager (the
// state and the walk's stop are in capture/boundary.h, which holds the type pointer).
#pragma once
#include <Python.h>

#include "capture/boundary.h"

namespace callsite::detail {

PyTypeObject *init_boundary_type() noexcept;

}  // namespace callsite::detail
