// python/filter_type.h — the callsite.Filter type (state: filter/decisions.h).
#pragma once
#include <Python.h>

namespace callsite::detail {

/// Creates the type (once) and records it as filter's filter_type. nullptr + error.
PyTypeObject *init_filter_type() noexcept;

}  // namespace callsite::detail
