// native/visible_code.cc — builds the synthetic code objects of a visible executable, one per
// shard of kStatesPerShard states: co_code = RESUME 0 (and its inline cache, 3.15),
// LOAD_CONST None, RETURN_VALUE, then one NOP per state and one NOP for "no location";
// co_linetable (the 3.11+ location table, Objects/locations.md) has one entry per
// instruction. RESUME first makes _co_firsttraceable 0, so a frame at any later instruction
// counts as complete. The return is what exec()/eval() or a function made from the code runs
// (any tool walking frames can reach the code object): it returns None instead of running off
// the end. It also leaves the states' NOPs unreachable, so CPython's f_lineno setter
// (frame_setlineno's mark_stacks) refuses to move a visible frame ("can't jump from
// unreachable code"): the line CPython shows stays the one callsite captures.
#include "native/visible_code.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "layouts/visible_frame.h"
#include "native/frame_locals.h"
#include "native/guest_module.h"
#include "native/reify.h"

namespace callsite::native {

namespace {

// Location table entry kinds (3.11+ Objects/locations.md): the header byte is
// 0x80 | kind << 3 | (code units - 1).
constexpr int kNoColumns = 13, kLong = 14, kNoLocation = 15;

void put_varint(std::string &out, unsigned value) {
  while (value >= 64) {
    out.push_back(char(64 | (value & 63)));
    value >>= 6;
  }
  out.push_back(char(value));
}

void put_svarint(std::string &out, int value) {
  put_varint(out, value < 0 ? (unsigned(-value) << 1) | 1 : unsigned(value) << 1);
}

// What a shard keeps of a state's location: copied out of the reification cache right
// away, because the next reify() runs a reifier, which may reify other states, clear the
// cache or let another thread do so (nothing borrowed from the cache outlives the call).
struct StateLocation {
  bool located = false;
  int lineno = -1, end_lineno = -1, colno = -1, end_colno = -1;
};

// One instruction's entry. `line` tracks the table's running line, which the no-location
// kind leaves unchanged (as CPython's decoder does).
void put_entry(std::string &out, int *line, const StateLocation *r, bool with_columns) {
  if (!r->located) {
    out.push_back(char(0x80 | kNoLocation << 3));
    return;
  }
  const bool columns = with_columns && r->colno >= 0 && r->end_colno >= 0;
  out.push_back(char(0x80 | (columns ? kLong : kNoColumns) << 3));
  put_svarint(out, r->lineno - *line);
  *line = r->lineno;
  if (!columns) return;
  const int end_line = r->end_lineno >= r->lineno ? r->end_lineno : r->lineno;
  put_varint(out, unsigned(end_line - r->lineno));
  put_varint(out, unsigned(r->colno) + 1);
  put_varint(out, unsigned(r->end_colno) + 1);
}

bool usable(const Reified *r, PyObject *filename) {
  if (!r || r->placeholder || r->lineno < 1) return false;
  if (!filename) return true;
  // Both exact str (reify.cc stores exact str): the compare runs no Python.
  const int same = PyUnicode_Compare(r->filename, filename);
  if (same == -1 && PyErr_Occurred()) PyErr_Clear();
  return same == 0;
}

// CPython's own constructor path: an empty code object, then code.replace() with our
// instructions and table, so every field CPython derives (co_framesize,
// _co_firsttraceable, the quickened copy) is computed by CPython itself. The file and
// function names go in as str objects, not through PyCode_NewEmpty's C strings, which
// would cut them at an embedded NUL where callsite's captures do not.
PyObject *make_code(PyObject *filename, PyObject *name, int firstlineno,
                    const std::string &bytecode, const std::string &table, int extra_flags) {
  // co_consts: None for the body's LOAD_CONST, and a str that keeps the tuple from equalling
  // any compiler's (marshal still accepts it). The one tuple of every synthetic code object:
  // its identity is what callsite's walker recognises (layouts/visible_frame.h). Never
  // released, as the codes of static executables.
  static PyObject *consts = nullptr;
  if (!consts) {
    consts = Py_BuildValue("(Os)", Py_None, "callsite: synthetic code of visible native frames");
    if (!consts) return nullptr;
    callsite_synthetic_consts = consts;
  }
  PyObject *empty = reinterpret_cast<PyObject *>(PyCode_NewEmpty("", "", firstlineno));
  if (!empty) return nullptr;
  PyObject *replace = PyObject_GetAttrString(empty, "replace");
  Py_DECREF(empty);
  if (!replace) return nullptr;
  PyObject *co_code = PyBytes_FromStringAndSize(bytecode.data(), Py_ssize_t(bytecode.size()));
  PyObject *co_linetable =
      co_code ? PyBytes_FromStringAndSize(table.data(), Py_ssize_t(table.size())) : nullptr;
  PyObject *args = co_linetable ? PyTuple_New(0) : nullptr;
  // Not CO_OPTIMIZED: frame.f_locals then returns the frame's own f_locals object (3.13+
  // frame_getlocals; 3.12 merges the zero fast locals into it), where a frame of an
  // executable with a locals reifier holds its FrameLocals (native/frame_locals.h).
  PyObject *kwargs =
      args ? Py_BuildValue("{s:O,s:O,s:i,s:i,s:O,s:O,s:O,s:O,s:y}", "co_code", co_code,
                           "co_linetable", co_linetable, "co_flags",
                           CO_NEWLOCALS | CALLSITE_CO_VISIBLE_NATIVE | extra_flags,
                           "co_stacksize", 1, "co_filename", filename, "co_name", name,
                           "co_qualname", name, "co_consts", consts, "co_exceptiontable", "")
           : nullptr;
  Py_XDECREF(co_code);
  Py_XDECREF(co_linetable);
  PyObject *code = kwargs ? PyObject_Call(replace, args, kwargs) : nullptr;
  Py_XDECREF(kwargs);
  Py_XDECREF(args);
  Py_DECREF(replace);
  return code;
}

// Code units before the first state's NOP: RESUME, its cache, LOAD_CONST, RETURN_VALUE.
inline int body_units(const callsite_visible_ops *ops) { return 1 + ops->resume_caches + 2; }

// The instruction of the shard's first state: the one after the body.
const std::uint16_t *first_state_of(PyObject *code, const callsite_visible_ops *ops) {
  return reinterpret_cast<const std::uint16_t *>(reinterpret_cast<const char *>(code) +
                                                 ops->code_units_offset) +
         body_units(ops);
}

// The body (RESUME and its cache, LOAD_CONST 0 = None, RETURN_VALUE), then one entry per
// state (not located: no location) and the "no location" slot.
void encode(const std::vector<StateLocation> &located, int firstlineno, bool columns,
            const callsite_visible_ops *ops, std::string *bytecode, std::string *table) {
  static const StateLocation nowhere;
  bytecode->clear();
  table->clear();
  bytecode->reserve(2 * (located.size() + 1 + std::size_t(body_units(ops))));
  bytecode->push_back(char(ops->resume_opcode));
  bytecode->push_back(0);
  bytecode->append(2 * std::size_t(ops->resume_caches), '\0');  // CACHE entries
  bytecode->push_back(char(ops->load_const_opcode));
  bytecode->push_back(0);
  bytecode->push_back(char(ops->return_value_opcode));
  bytecode->push_back(0);
  int line = firstlineno;
  // The body: the first line, delta 0, one entry of body_units code units (at most 8).
  table->push_back(char(0x80 | kNoColumns << 3 | (body_units(ops) - 1)));
  put_svarint(*table, 0);
  for (std::size_t k = 0; k <= located.size(); ++k) {  // k == size: the "no location" slot
    bytecode->push_back(char(ops->nop_opcode));
    bytecode->push_back(0);
    put_entry(*table, &line, k < located.size() ? &located[k] : &nowhere, columns);
  }
}

// The code of states [first, first + count). *filename (a strong reference, or nullptr while
// no state was located) is the executable's file: the first located state's, in state order.
PyObject *build_shard(const Executable *exe, std::size_t first, std::size_t count,
                      PyObject **filename, const callsite_visible_ops *ops) {
  std::vector<StateLocation> located(count);
  int firstlineno = 0;
  for (std::size_t k = 0; k < count; ++k) {
    const Reified *r = reify(exe, first + k);
    if (!r) return nullptr;  // a ReificationWarning turned into an error
    if (!usable(r, *filename)) continue;
    if (!*filename) *filename = Py_NewRef(r->filename);
    if (!firstlineno || r->lineno < firstlineno) firstlineno = r->lineno;
    located[k] = StateLocation{true, r->lineno, r->end_lineno, r->colno, r->end_colno};
  }
  PyObject *file = *filename;
  PyObject *placeholder = nullptr;  // nothing located yet: "<kind:name>"
  if (!file) {
    placeholder = placeholder_filename(exe);
    if (!placeholder) return nullptr;
    file = placeholder;
  }
  // The first line is the first located line: 3.14+ instrumentation stores each line as its
  // distance from co_firstlineno and requires it to be at least -1 (instrumentation.c,
  // compute_line_delta).
  if (!firstlineno) firstlineno = 1;
  std::string bytecode, table;
  encode(located, firstlineno, true, ops, &bytecode, &table);
  if (table.size() > kMaxShardTableBytes)  // lines only: at most 7 bytes per state
    encode(located, firstlineno, false, ops, &bytecode, &table);
  PyObject *name = executable_name(exe);
  // Frames of an executable with a locals reifier hold a FrameLocals from their push: the
  // bit tells the push, from the code it already has in hand (native/frame_locals.h).
  const int flags = has_locals(exe, nullptr) ? CALLSITE_CO_NATIVE_LOCALS : 0;
  PyObject *code = name ? make_code(file, name, firstlineno, bytecode, table, flags) : nullptr;
  Py_XDECREF(name);
  Py_XDECREF(placeholder);
  return code;
}

// post_mortem_code's copies, by (the shard code they copy, held, their first line); the map
// itself is never destroyed (as `codes`). A copy per line a frame was kept at: bounded by
// kMaxPostMortemCopies, past which the map starts afresh (kept frames hold their own code).
auto &post_mortem_copies = *new std::map<std::pair<PyObject *, int>, PyObject *>();
constexpr std::size_t kMaxPostMortemCopies = 4096;

// Releases the copies of the shard code `shard` (nullptr: every copy). Each goes out of the
// map before its reference is dropped: a code object's deallocation may run code (a code
// watcher) that reaches the map.
void drop_post_mortem_copies(PyObject *shard) {
  for (;;) {
    auto it = shard ? post_mortem_copies.lower_bound({shard, INT_MIN}) : post_mortem_copies.begin();
    if (it == post_mortem_copies.end() || (shard && it->first.first != shard)) return;
    PyObject *copy = it->second, *original = it->first.first;
    post_mortem_copies.erase(it);
    Py_DECREF(copy);
    Py_DECREF(original);
  }
}

}  // namespace

PyObject *post_mortem_code(PyObject *code, PyFrameObject *frame) {
  // f_globals: PyFrame_GetGlobals is 3.11+, and this file builds for 3.10 too.
  PyObject *globals = PyObject_GetAttrString(reinterpret_cast<PyObject *>(frame), "f_globals");
  const int new_first =
      globals ? guest_first_line(reinterpret_cast<PyCodeObject *>(code)->co_filename, globals,
                                 PyFrame_GetLineNumber(frame))
              : -1;
  Py_XDECREF(globals);
  if (new_first < 0) return nullptr;
  const auto key = std::make_pair(code, new_first);
  if (auto it = post_mortem_copies.find(key); it != post_mortem_copies.end())
    return Py_NewRef(it->second);
  // encode() began the table with the body's entry: its header byte, then a zero delta (one
  // byte). Re-based on the new first line, that entry keeps the body's line, and every later
  // entry, relative to the one before, keeps its own.
  const int firstlineno = reinterpret_cast<PyCodeObject *>(code)->co_firstlineno;
  PyObject *table = PyObject_GetAttrString(code, "co_linetable");
  if (!table) return nullptr;
  if (!PyBytes_Check(table) || PyBytes_GET_SIZE(table) < 2 || PyBytes_AS_STRING(table)[1] != 0) {
    Py_DECREF(table);
    PyErr_SetString(PyExc_SystemError, "callsite: not a synthetic code object's line table");
    return nullptr;
  }
  std::string rebased(1, PyBytes_AS_STRING(table)[0]);
  put_svarint(rebased, firstlineno - new_first);
  rebased.append(PyBytes_AS_STRING(table) + 2, std::size_t(PyBytes_GET_SIZE(table) - 2));
  Py_DECREF(table);
  PyObject *replace = PyObject_GetAttrString(code, "replace");
  PyObject *new_table =
      replace ? PyBytes_FromStringAndSize(rebased.data(), Py_ssize_t(rebased.size())) : nullptr;
  PyObject *args = new_table ? PyTuple_New(0) : nullptr;
  PyObject *kwargs = args ? Py_BuildValue("{s:i,s:O}", "co_firstlineno", new_first,
                                          "co_linetable", new_table)
                          : nullptr;
  PyObject *copy = kwargs ? PyObject_Call(replace, args, kwargs) : nullptr;
  Py_XDECREF(kwargs);
  Py_XDECREF(args);
  Py_XDECREF(new_table);
  Py_XDECREF(replace);
  if (!copy) return nullptr;
  // A collection during the build may have made it meanwhile (a finalizer popping a frame).
  if (auto it = post_mortem_copies.find(key); it != post_mortem_copies.end()) {
    Py_DECREF(copy);
    return Py_NewRef(it->second);
  }
  if (post_mortem_copies.size() >= kMaxPostMortemCopies)
    drop_post_mortem_copies(nullptr);
  try {
    post_mortem_copies.emplace(key, Py_NewRef(copy));
    Py_INCREF(code);  // the key's: no other code takes its address while the entry is kept
  } catch (const std::exception &) {
    Py_DECREF(copy);  // the cache's reference
  }
  return copy;  // cached or not, the caller's reference
}

VisibleCode *build_visible_code(const Executable *exe, std::size_t states) {
  const callsite_visible_ops *ops = callsite_visible_frames();
  if (!ops) {
    PyErr_SetString(PyExc_RuntimeError, "no visible-frame implementation for this interpreter");
    return nullptr;
  }
  if (states > kMaxVisibleStates) {
    PyErr_Format(PyExc_ValueError,
                 "visible executable '%s': states must be <= %zu (the synthetic code is built "
                 "eagerly), got %zu",
                 exe->name ? exe->name : "?", kMaxVisibleStates, states);
    return nullptr;
  }
  PyObject *filename = nullptr;
  std::unique_ptr<VisibleShard[]> shards;
  std::size_t built = 0;
  try {
    const std::size_t count = states ? (states + kStatesPerShard - 1) / kStatesPerShard : 1;
    shards = std::make_unique<VisibleShard[]>(count);
    for (; built < count; ++built) {
      const std::size_t first = built * kStatesPerShard;
      const std::size_t n = std::min(kStatesPerShard, states - std::min(states, first));
      PyObject *code = build_shard(exe, first, n, &filename, ops);
      if (!code) break;
      shards[built] = VisibleShard{code, first_state_of(code, ops), first, n};
    }
    // The guest file of its frames' globals: the file the states name, else the
    // placeholder the code carries.
    PyObject *function =
        built == count
            ? guest_function_of(exe, filename ? filename
                                              : reinterpret_cast<PyCodeObject *>(shards[0].code)
                                                    ->co_filename)
            : nullptr;
    if (function) {
      auto *out = new VisibleCodeBlock{{states, kStatesPerShard, count, shards.get()}, function};
      shards.release();
      Py_XDECREF(filename);
      return &out->shared;
    }
  } catch (const std::exception &) {  // out of memory; never the forced unwind
    PyErr_NoMemory();
  }
  for (std::size_t s = 0; s < built; ++s) Py_DECREF(shards[s].code);
  Py_XDECREF(filename);
  return nullptr;
}

void free_visible_code(VisibleCode *code) noexcept {
  if (!code) return;
  for (std::size_t s = 0; s < code->shard_count; ++s) {
    drop_post_mortem_copies(code->shards[s].code);
    Py_XDECREF(code->shards[s].code);
  }
  delete[] code->shards;
  auto *block = reinterpret_cast<VisibleCodeBlock *>(code);
  release_guest_function(block->function);
  delete block;
}

}  // namespace callsite::native
