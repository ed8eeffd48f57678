// core/args.h — argument parsing shared by every entry point that skips nanobind's dispatch
// (capture(), Filter, tracking queries, MLIR location()).
#pragma once
#include <Python.h>

#include <cstddef>

namespace callsite::detail {

/// Binds METH_FASTCALL|METH_KEYWORDS `args` (the first `nargs` positional, then one per
/// `kwnames` entry) to `slots` by `names` (the first `n_positional` of them may be
/// positional). Slots not given stay nullptr. False with a TypeError naming `function` for
/// too many positionals, an unknown keyword, or a value given twice.
bool bind_fastcall_args(const char *function, const char *const *names, Py_ssize_t n_names,
                        Py_ssize_t n_positional, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, PyObject **slots) noexcept;

/// Parses a non-negative count argument: None → `none_value`; bool is rejected like any
/// non-int. False with TypeError/ValueError naming `what`.
bool parse_count(PyObject *value, const char *what, std::size_t none_value,
                 std::size_t *out) noexcept;

}  // namespace callsite::detail
