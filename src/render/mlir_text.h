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

/// Appends one frame's NameLoc as MLIR prints it: `"qualname"("file":l:c to :ec)` on 3.11+
/// (FileLineColRange: `l:c` when empty, `l:c to l2:c2` across lines), `"name"("file":l:0)` on
/// 3.10 (co_name and a FileLineColLoc with column 0, as MLIR builds them there). Missing
/// values print as MLIR prints -1 passed as unsigned. False with a Python error.
bool append_mlir_frame(std::string &out, const FrameInfo &info) noexcept;

/// MLIR's text for the location of `frames[0..n)` (innermost first): `loc(unknown)` for none,
/// the bare NameLoc for one, `loc(callsite(f0 at callsite(f1 at ... fN)))` otherwise — what
/// `str(op.location)` prints for an op built under loc_tracebacks(). False with an error.
bool mlir_location_text(const RawFrame *frames, std::size_t n, std::string *out);

}  // namespace callsite
