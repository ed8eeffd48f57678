// render/mlir_text.cc — MLIR's printed location syntax (mlir/lib/IR/AsmPrinter.cpp
// printLocationInternal), byte for byte, without MLIR: Traceback.to_mlir / Frame.to_mlir.
#include "render/mlir_text.h"

#include "core/compat.h"
#include "symbolize/symbolize.h"

namespace callsite {
namespace {

// The UTF-8 of a str; lone surrogates (undecodable file names) as surrogateescape bytes.
bool utf8_of(PyObject *s, std::string &out, PyObject **holder) {
  Py_ssize_t size = 0;
  if (const char *p = PyUnicode_AsUTF8AndSize(s, &size)) {
    out.assign(p, size_t(size));
    return true;
  }
  PyErr_Clear();
  *holder = PyUnicode_AsEncodedString(s, "utf-8", "surrogateescape");
  if (!*holder) return false;
  out.assign(PyBytes_AS_STRING(*holder), size_t(PyBytes_GET_SIZE(*holder)));
  return true;
}

bool append_quoted(std::string &out, PyObject *s) {
  if (!s || !PyUnicode_Check(s)) {
    PyErr_SetString(PyExc_TypeError, "callsite: frame name or filename is not a str");
    return false;
  }
  std::string bytes;
  PyObject *holder = nullptr;
  const bool ok = utf8_of(s, bytes, &holder);
  Py_XDECREF(holder);
  if (!ok) return false;
  out += '"';
  append_mlir_escaped(out, bytes.data(), bytes.size());
  out += '"';
  return true;
}

// MLIR's builders take `unsigned`: CPython's -1 ("none") arrives as 4294967295.
inline void append_unsigned(std::string &out, int v) { out += std::to_string(unsigned(v)); }

}  // namespace

void append_mlir_escaped(std::string &out, const char *s, std::size_t size) {
  static const char hex[] = "0123456789ABCDEF";
  for (std::size_t i = 0; i < size; ++i) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c == '\\') {
      out += "\\\\";
    } else if (c >= 0x20 && c <= 0x7E && c != '"') {  // llvm::isPrint
      out += char(c);
    } else {
      out += '\\';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
}

bool append_mlir_frame(std::string &out, const FrameInfo &info) noexcept {
  if (!append_quoted(out, compat::mlir_frame_name(info))) return false;
  out += '(';
  // MLIR prints a FileLineColLoc with an empty filename as "-" (as ir.Location.file("") shows).
  if (info.filename && PyUnicode_Check(info.filename) && PyUnicode_GET_LENGTH(info.filename) == 0)
    out += "\"-\"";
  else if (!append_quoted(out, info.filename))
    return false;
  const MlirPositions p = mlir_positions(info);
  out += ':';
  append_unsigned(out, p.line);
  out += ':';
  if constexpr (!compat::kHasColumns) {
    out += '0';  // mlirLocationFileLineColGet(ctx, file, PyFrame_GetLineNumber(frame), 0)
    out += ')';
    return true;
  }
  // FileLineColRange printing: empty range → l:c, same line → l:c to :ec, else l:c to l2:c2.
  append_unsigned(out, p.col);
  if (unsigned(p.end_line) != unsigned(p.line)) {
    out += " to ";
    append_unsigned(out, p.end_line);
    out += ':';
    append_unsigned(out, p.end_col);
  } else if (unsigned(p.end_col) != unsigned(p.col)) {
    out += " to :";
    append_unsigned(out, p.end_col);
  }
  out += ')';
  return true;
}

bool mlir_location_text(const RawFrame *frames, std::size_t n, std::string *out) {
  out->assign("loc(");
  if (n == 0) {
    *out += "unknown)";
    return true;
  }
  for (std::size_t i = 0; i < n; ++i) {
    FrameInfo info;
    if (!symbolize(frames[i], &info)) return false;
    if (i + 1 < n) *out += "callsite(";
    if (!append_mlir_frame(*out, info)) return false;
    if (i + 1 < n) *out += " at ";
  }
  out->append(n - 1, ')');
  *out += ')';
  return true;
}

}  // namespace callsite
