// symbolize/symbolize.cc — RawFrame → FrameInfo: names from the code object, positions from
// the per-code cache, native frames through their reifier.
#include "callsite/symbolize.h"

#include "native/hooks.h"
#include "symbolize/code_info.h"

namespace callsite {

bool symbolize(const RawFrame &frame, FrameInfo *out) noexcept {
  if (!frame.is_python()) return native::symbolize(frame, out);
  auto *code = static_cast<PyCodeObject *>(frame.code());
  detail::Position pos;
  if (!detail::code_position(code, frame.lasti(), &pos)) return false;
  out->kind = FrameKind::python;
  out->filename = code->co_filename;
  out->name = code->co_name;
#if PY_VERSION_HEX >= 0x030B0000
  out->qualname = code->co_qualname;
#else
  out->qualname = code->co_name;  // 3.10 code objects have no co_qualname
#endif
  out->code = reinterpret_cast<PyObject *>(code);
  out->lineno = pos.lineno;
  out->end_lineno = pos.end_lineno;
  out->colno = pos.colno;
  out->end_colno = pos.end_colno;
  return true;
}

}  // namespace callsite
