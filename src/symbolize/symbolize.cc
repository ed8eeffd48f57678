// symbolize/symbolize.cc — RawFrame → FrameInfo: names from the code object, positions from
// the per-code cache, native frames through the registered reifier.
#include "symbolize/symbolize.h"

#include "core/compat.h"
#include "symbolize/code_info.h"

namespace callsite {
namespace {

NativeSymbolizer native_symbolizer = nullptr;

}  // namespace

void set_native_symbolizer(NativeSymbolizer symbolizer) noexcept {
  native_symbolizer = symbolizer;
}

bool symbolize(const RawFrame &frame, FrameInfo *out) {
  if (!frame.is_python()) {
    if (native_symbolizer) return native_symbolizer(frame, out);
    PyErr_SetString(PyExc_RuntimeError, "callsite: native frames are not initialised");
    return false;
  }
  auto *code = static_cast<PyCodeObject *>(frame.code());
  detail::Position pos;
  if (!detail::code_position(code, frame.lasti(), &pos)) return false;
  out->kind = FrameKind::python;
  out->filename = code->co_filename;
  out->name = code->co_name;
  out->qualname = compat::display_name(code);
  out->code = reinterpret_cast<PyObject *>(code);
  out->lineno = pos.lineno;
  out->end_lineno = pos.end_lineno;
  out->colno = pos.colno;
  out->end_colno = pos.end_colno;
  return true;
}

}  // namespace callsite
