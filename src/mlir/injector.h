// mlir/injector.h — the C++ wrappers put in place of the bindings' op builders while
// auto_locations is on: they add loc= to ops built without one, nothing else.
#pragma once
#include <Python.h>

namespace callsite::mlir {

struct BindingsObject;  // mlir/bindings.h

enum class InjectorKind {
  opview_init,  ///< OpView.__init__(self, name, ...): a method; only its build overload
  builder,      ///< Operation.create(name, ...), OpView.build_generic's function: always
};

/// A wrapper of `original` (new reference). The opview_init kind is a method descriptor
/// (binds like a function, and CPython's method calls skip the bound-method object).
/// `loc_position`: the index of `loc` among the positional arguments the wrapper receives
/// (self/cls included), as the bindings declare it; -1 if it cannot be passed by position.
PyObject *new_injector(InjectorKind kind, PyObject *original, BindingsObject *bindings,
                       Py_ssize_t loc_position) noexcept;

/// The wrapper type of OpView.__init__ (`method`) or of the other builders.
PyTypeObject *injector_type(bool method) noexcept;

/// True if `obj` is one of these wrappers.
bool is_injector(PyObject *obj) noexcept;

/// Creates the two wrapper types; once at module init (python/init.cc).
bool init_injectors() noexcept;

}  // namespace callsite::mlir
