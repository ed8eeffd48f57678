// render/mlir_text.h — frames as MLIR prints the locations that loc_tracebacks() builds.
#pragma once
#include <Python.h>

#include <cstddef>
#include <string>

#include "callsite/frame.h"

namespace callsite {

/// Appends `s` (UTF-8) escaped as MLIR's printEscapedString does (llvm/Support): `\\` for a
/// backslash, printable ASCII except `"` as is, every other byte as `\XX` (upper-case hex).
void append_mlir_escaped(std::string &out, const char *s, std::size_t size);

/// The positions a frame's location is built from: (line, column, end line, end column).
/// Python frames keep CPython's values as MLIR's own walk passes them (a missing one is -1,
/// printed as 4294967295, e.g. under -X no_debug_ranges). A native frame's reifier may know
/// only the line: MLIR has no "unknown column", and where MLIR itself has only a line (3.10:
/// FileLineColLoc(file, PyFrame_GetLineNumber, 0)) it uses column 0; so an unknown line or
/// column is 0 and an unknown end is the start: a line-only frame is FileLineColRange(file, 7,
/// 0, 7, 0), which prints as the bindings' Location.file(file, 7, 0) does, `file:7:0`.
struct MlirPositions {
  int line, col, end_line, end_col;
};
inline MlirPositions mlir_positions(const FrameInfo &info) noexcept {
  if (info.kind != FrameKind::native)
    return {info.lineno, info.colno, info.end_lineno, info.end_colno};
  const int line = info.lineno < 0 ? 0 : info.lineno;
  const int col = info.colno < 0 ? 0 : info.colno;
  const int end_line = info.end_lineno < 0 ? line : info.end_lineno;
  const int end_col = info.end_colno >= 0 ? info.end_colno : end_line == line ? col : 0;
  return {line, col, end_line, end_col};
}

/// Appends one frame's NameLoc as MLIR prints it: `"qualname"("file":l:c to :ec)` on 3.11+
/// (FileLineColRange: `l:c` when empty, `l:c to l2:c2` across lines), `"name"("file":l:0)` on
/// 3.10 (co_name and a FileLineColLoc with column 0, as MLIR builds them there), from
/// mlir_positions(). False with a Python error.
bool append_mlir_frame(std::string &out, const FrameInfo &info) noexcept;

/// MLIR's text for the location of `frames[0..n)` (innermost first): `loc(unknown)` for none,
/// the bare NameLoc for one, `loc(callsite(f0 at callsite(f1 at ... fN)))` otherwise — what
/// `str(op.location)` prints for an op built under loc_tracebacks(). False with an error.
bool mlir_location_text(const RawFrame *frames, std::size_t n, std::string *out);

}  // namespace callsite
