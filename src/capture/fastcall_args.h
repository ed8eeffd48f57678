// capture/fastcall_args.h — binding METH_FASTCALL|METH_KEYWORDS arguments to named slots, for
// the hot entry points that skip nanobind's dispatch (capture(), mlir location()).
#pragma once
#include <Python.h>

namespace callsite::detail {

/// Binds `args` (the first `nargs` positional, then one per `kwnames` entry) to `slots` by
/// `names` (the first `n_positional` of them may be positional). Slots not given stay
/// nullptr. False with a TypeError naming `function` for too many positionals, an unknown
/// keyword, or a value given twice.
bool bind_fastcall_args(const char *function, const char *const *names, Py_ssize_t n_names,
                        Py_ssize_t n_positional, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, PyObject **slots) noexcept;

}  // namespace callsite::detail
