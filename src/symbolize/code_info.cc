// symbolize/code_info.cc — the per-code-object cache in co_extra, and line-table decoding.
#include "symbolize/code_info.h"

#include "core/compat.h"

namespace callsite::detail {
namespace {

const char *direct_refusal = "not initialised";
Py_ssize_t code_info_index = -1;  // callsite's co_extra index (-1: none)

void free_code_info(void *p) { delete static_cast<CodeInfo *>(p); }

inline Py_ssize_t request_index(freefunc f) { return compat::request_code_extra_index(f); }
inline int get_extra(PyObject *c, void **p) {
  return compat::code_get_extra(c, code_info_index, p);
}
inline int set_extra(PyObject *c, void *p) {
  return compat::code_set_extra(c, code_info_index, p);
}

// 3.11+ code objects carry PEP 657 location tables (with columns), 3.10 PEP 626 line tables.
constexpr LinetableFormat kFormat =
    compat::kHasColumns ? LinetableFormat::pep657 : LinetableFormat::pep626;

// Both reads of slots 0..index+1 agree (slots past the holder read as NULL either way).
bool reads_agree(PyObject *code) {
  for (Py_ssize_t i = 0; i <= code_info_index + 1; ++i) {
    void *expected = nullptr;
    if (compat::code_get_extra(code, i, &expected) < 0) return false;
    if (callsite_code_extra_read(reinterpret_cast<PyCodeObject *>(code), i) != expected)
      return false;
  }
  return true;
}

// Sets callsite's slot of a fresh code object to a CodeInfo with the public function and reads
// it back both ways: why the direct read must stay off, or nullptr. The code object's death
// frees the probe through the index's free function. No Python error is left set.
const char *direct_read_refusal() {
  if (const char *why = callsite_code_extra_build_refusal()) return why;
  auto *code = reinterpret_cast<PyObject *>(
      PyCode_NewEmpty("<callsite>", "code_extra_self_check", 1));
  if (!code) {
    PyErr_Clear();
    return "no code object to check with";
  }
  const char *why = nullptr;
  auto *probe = new (std::nothrow) CodeInfo();
  if (!probe) {
    why = "out of memory";
  } else if (!reads_agree(code)) {
    why = "an empty co_extra reads differently";
    delete probe;
  } else if (set_extra(code, probe) < 0) {
    why = "co_extra could not be set";
    delete probe;
  } else if (!reads_agree(code) ||
             callsite_code_extra_read(reinterpret_cast<PyCodeObject *>(code),
                                      code_info_index) != probe) {
    why = "co_extra's holder is laid out differently";
  }
  PyErr_Clear();
  Py_DECREF(code);
  return why;
}

bool decode(PyCodeObject *code, std::vector<PositionRange> *out) {
  // co_linetable is a bytes object on every supported version (cpython/code.h).
  PyObject *table = code->co_linetable;
  if (!table || !PyBytes_Check(table)) {
    PyErr_SetString(PyExc_SystemError, "callsite: code object has no co_linetable bytes");
    return false;
  }
  *out = decode_linetable(reinterpret_cast<const std::uint8_t *>(PyBytes_AS_STRING(table)),
                          size_t(PyBytes_GET_SIZE(table)), code->co_firstlineno, kFormat);
  return true;
}

}  // namespace

Py_ssize_t code_info_direct_index = -1;

bool init_code_info() noexcept {
  if (code_info_index >= 0) return true;
  code_info_index = request_index(free_code_info);
  if (code_info_index < 0) return false;
  direct_refusal = direct_read_refusal();
  use_code_info_direct(true);
  return true;
}

const char *code_info_direct_refusal() noexcept { return direct_refusal; }

bool use_code_info_direct(bool on) noexcept {
  code_info_direct_index = on && !direct_refusal ? code_info_index : -1;
  return code_info_direct_index >= 0;
}

CodeInfo *code_info_slow(PyCodeObject *code) noexcept {
  if (code_info_index < 0) return nullptr;
  void *p = nullptr;
  if (get_extra(reinterpret_cast<PyObject *>(code), &p) < 0) {
    PyErr_Clear();
    return nullptr;
  }
  if (p) return static_cast<CodeInfo *>(p);
  auto *info = new (std::nothrow) CodeInfo();
  if (!info) return nullptr;
  if (set_extra(reinterpret_cast<PyObject *>(code), info) < 0) {
    PyErr_Clear();
    delete info;
    return nullptr;
  }
  return info;
}

bool code_position(PyCodeObject *code, int lasti, Position *out) noexcept {
  if (CodeInfo *info = code_info(code)) {
    if (!info->decoded) {
      if (!decode(code, &info->positions)) return false;
      info->decoded = true;
    }
    *out = position_at(info->positions, lasti);
  } else {
    std::vector<PositionRange> ranges;
    if (!decode(code, &ranges)) return false;
    *out = position_at(ranges, lasti);
  }
  // frame.f_lineno before the first instruction is co_firstlineno (PyCode_Addr2Line with a
  // negative address), while co_positions() has nothing there: keep only the line.
  if (lasti < 0) *out = Position{code->co_firstlineno, -1, -1, -1};
  return true;
}

}  // namespace callsite::detail
