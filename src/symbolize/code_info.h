// symbolize/code_info.h — everything callsite caches about one code object, freed with it.
#pragma once
#include <Python.h>

#include <memory>
#include <vector>

#include "layouts/code_extra.h"
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

/// callsite's co_extra index while its slot is read from co_extra directly, else -1: one load
/// decides both.
extern Py_ssize_t code_info_direct_index;

/// code_info() when the CodeInfo is not yet there or the direct read is off.
CodeInfo *code_info_slow(PyCodeObject *code) noexcept;

/// The CodeInfo of `code`, created on first use; nullptr (no Python error) when the
/// interpreter has no co_extra index left for callsite. GIL held. Hot: the filter asks it for
/// every frame of every capture, so an existing one is read from co_extra without a call
/// where the start-up self-check allows it (layouts/code_extra.h).
inline CodeInfo *code_info(PyCodeObject *code) noexcept {
  if (code_info_direct_index >= 0)
    if (void *p = callsite_code_extra_read(code, code_info_direct_index))
      return static_cast<CodeInfo *>(p);
  return code_info_slow(code);
}

/// The position of `lasti` in `code`, through the CodeInfo cache (decoding it on first use),
/// or by decoding the table afresh when there is no cache. Returns false with a Python error.
bool code_position(PyCodeObject *code, int lasti, Position *out) noexcept;

/// Requests the co_extra index and runs the direct read's self-check; called once at module
/// init. False: no index left (then every lookup decodes afresh — correct, slower).
bool init_code_info() noexcept;

/// Why the direct co_extra read is refused (a static string), or nullptr when it may be used.
const char *code_info_direct_refusal() noexcept;

/// Switches the direct read (tests compare both): on only where it is not refused. Returns
/// whether it is on.
bool use_code_info_direct(bool on) noexcept;

}  // namespace callsite::detail
