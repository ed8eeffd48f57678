// symbolize/code_info.h — everything callsite caches about one code object, freed with it.
#pragma once
#include <Python.h>

#include <memory>
#include <vector>

#include "symbolize/linetable.h"

namespace callsite::detail {

/// A cache a higher layer hangs on a code object; it is destroyed when the code object dies,
/// which is how that cache learns a pointer is stale.
struct CodeInfoExtension {
  virtual ~CodeInfoExtension() = default;
};

/// Stored in the code object's co_extra slot (PyUnstable_Code_SetExtra; _PyCode_SetExtra
/// before 3.12), so the line table is decoded once per code object and never outlives it.
struct CodeInfo {
  std::vector<PositionRange> positions;
  bool decoded = false;
  /// The one cache of a higher layer: the filter's decisions (filter/decisions.h).
  std::unique_ptr<CodeInfoExtension> extension;
};

/// The CodeInfo of `code`, created on first use; nullptr (no Python error) when the
/// interpreter has no co_extra index left for callsite. GIL held.
CodeInfo *code_info(PyCodeObject *code) noexcept;

/// The position of `lasti` in `code`, through the CodeInfo cache (decoding it on first use),
/// or by decoding the table afresh when there is no cache. Returns false with a Python error.
bool code_position(PyCodeObject *code, int lasti, Position *out) noexcept;

/// Requests the co_extra index; called once at module init. False: none left (then every
/// lookup decodes afresh — correct, slower).
bool init_code_info() noexcept;

}  // namespace callsite::detail
