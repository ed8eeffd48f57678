// testing/code_positions.h — decoded line tables, for tests to compare with co_positions().
#pragma once
#include <Python.h>

namespace callsite::detail {

/// One (lineno, end_lineno, colno, end_colno) tuple per code unit of `code`, None for -1:
/// what list(code.co_positions()) gives on 3.11+ (3.10: lines only, the rest None).
PyObject *debug_code_positions(PyObject *code) noexcept;

}  // namespace callsite::detail
