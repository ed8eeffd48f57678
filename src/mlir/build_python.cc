// mlir/build_python.cc — ir.Location construction via Location.file/.name/.callsite/.unknown,
// cached per Context: (code, lasti) -> frame NameLoc, kept-frame chain -> CallSiteLoc.
#include "mlir/build_python.h"

#include <exception>
#include <new>
#include <unordered_map>
#include <vector>

#include "core/compat.h"
#include "core/frame_refs.h"
#include "core/small_buffer.h"
#include "core/stack_table.h"
#include "mlir/bindings.h"
#include "mlir/wrap_table.h"
#include "render/mlir_text.h"
#include "symbolize/symbolize.h"

namespace callsite::mlir {
namespace {

using detail::release;
using detail::retain;

PyObject *kw_context = nullptr;        // ("context",)
PyObject *kw_child_context = nullptr;  // ("childLoc", "context")
PyObject *str_name_str = nullptr, *str_child_loc = nullptr, *str_is_a_name = nullptr;

inline PyObject *call(PyObject *f, PyObject *const *args, std::size_t n, PyObject *kwnames) {
  return PyObject_Vectorcall(f, args, n, kwnames);
}

// Kept frames whose chain hashes live on the C stack (more go to the heap).
constexpr std::size_t kInlineChain = 32;

// `loc` as a NameLoc object (new reference), or nullptr without an error when it is not one.
PyObject *as_nameloc(BindingsObject *b, PyObject *loc) {
  if (b->nameloc_type) {
    auto *type = reinterpret_cast<PyTypeObject *>(b->nameloc_type);
    if (PyObject_TypeCheck(loc, type)) return Py_NewRef(loc);
    if (!Py_IS_TYPE(loc, reinterpret_cast<PyTypeObject *>(b->location_type))) return nullptr;
    // A plain ir.Location may hold a NameLoc (one made by Location._CAPICreate, an op's
    // location): the typed class casts it, and raises when it is not one. MLIR's own
    // NAMELOC_WRAP asks mlirLocationIsAName, whatever the Python class.
    PyObject *cast = PyObject_CallOneArg(b->nameloc_type, loc);
    if (!cast) PyErr_Clear();
    return cast;
  }
  PyObject *r = PyObject_CallMethodNoArgs(loc, str_is_a_name);  // untyped older bindings
  if (!r) {
    PyErr_Clear();
    return nullptr;
  }
  const bool yes = PyObject_IsTrue(r) == 1;
  Py_DECREF(r);
  return yes ? Py_NewRef(loc) : nullptr;
}

class PythonApiBuilder final : public LocationBuilder {
 public:
  PythonApiBuilder(BindingsObject *b, PyObject *ctx) noexcept : LocationBuilder(b, ctx, true) {}
  ~PythonApiBuilder() override { clear_all(); }

  PyObject *kept_location(const RawFrame *kept, std::size_t m, bool *made_before) override;
  PyObject *explicit_location(PyObject *loc) override { return loc; }  // typed already
  PyObject *nameloc_wrap(PyObject *current, PyObject *inner, bool own_inner) override;
  std::size_t frame_count() const noexcept override { return frames_.size(); }
  BuilderCounts counts() const noexcept override {
    return {frames_.size(), chains_.size(), wraps_.size(), 0, unknown_ ? 1u : 0u,
            held_ + wraps_.held()};
  }
  void clear_sequences() noexcept override;
  void clear_all() noexcept override;

 private:
  PyObject *build_frame(const RawFrame &frame);
  PyObject *frame_location(const RawFrame &frame);
  PyObject *unknown_location();
  PyObject *callsite_location(PyObject *callee, PyObject *caller);

  std::size_t held_ = 0;          ///< Location objects owned by frames_, chains_, unknown_
  PyObject *unknown_ = nullptr;   ///< owned
  std::unordered_map<RawFrame, PyObject *, detail::RawFrameHash> frames_;  ///< owned; keys retained
  detail::StackTable<PyObject *> chains_{detail::FrameRefs::retained};       ///< owned
  WrapTable wraps_;
};

PyObject *PythonApiBuilder::build_frame(const RawFrame &frame) {
  FrameInfo info;
  if (!symbolize(frame, &info)) return nullptr;
  // The strings are borrowed from caches (the reifier's, the code object's) and the calls below
  // run Python code, which may clear those caches: hold them.
  PyObject *name = Py_XNewRef(compat::mlir_frame_name(info));
  PyObject *filename = Py_XNewRef(info.filename);
  // 3.11+: PyCode_Addr2Location's values go to mlirLocationFileLineColRangeGet as they are
  // (a native frame's unknown positions as render/mlir_text.h says); 3.10: FileLineColLoc(file,
  // PyFrame_GetLineNumber, 0). The same values as Traceback.to_mlir() prints.
  const MlirPositions p = mlir_positions(info);
  constexpr std::size_t kNums = compat::kHasColumns ? 4 : 2;
  PyObject *nums[4] = {PyLong_FromLong(p.line),
                       PyLong_FromLong(compat::kHasColumns ? p.col : 0),
                       compat::kHasColumns ? PyLong_FromLong(p.end_line) : nullptr,
                       compat::kHasColumns ? PyLong_FromLong(p.end_col) : nullptr};
  PyObject *file = nullptr;
  bool ok = name && filename;
  for (std::size_t i = 0; i < kNums; ++i) ok = ok && nums[i];
  if (ok) {
    PyObject *args[2 + kNums];
    args[0] = filename;
    for (std::size_t i = 0; i < kNums; ++i) args[1 + i] = nums[i];
    args[1 + kNums] = context;
    file = call(bindings->loc_file, args, 1 + kNums, kw_context);
  }
  for (PyObject *n : nums) Py_XDECREF(n);
  Py_XDECREF(filename);
  PyObject *loc = nullptr;
  if (file) {
    PyObject *args[3] = {name, file, context};
    loc = call(bindings->loc_name, args, 1, kw_child_context);
    Py_DECREF(file);
  }
  Py_XDECREF(name);
  return loc;
}

// Cached per (code, lasti); borrowed.
PyObject *PythonApiBuilder::frame_location(const RawFrame &frame) {
  if (auto it = frames_.find(frame); it != frames_.end()) return it->second;
  PyObject *loc = build_frame(frame);
  if (!loc) return nullptr;
  try {  // looked up again: building ran Python code, which may have stored it
    auto [it, inserted] = frames_.emplace(frame, loc);
    if (!inserted) {  // built meanwhile by a re-entrant call: keep the first
      Py_DECREF(loc);
      return it->second;
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(loc);
    return PyErr_NoMemory();
  }
  ++held_;
  retain(frame);  // the key's reference, released with the entry
  return loc;
}

// Location.unknown(context), cached; borrowed.
PyObject *PythonApiBuilder::unknown_location() {
  if (!unknown_) {
    PyObject *args[1] = {context};
    PyObject *loc = call(bindings->loc_unknown, args, 0, kw_context);
    if (!loc) return nullptr;
    if (unknown_) {  // made meanwhile by a re-entrant call
      Py_DECREF(loc);
    } else {
      unknown_ = loc;
      ++held_;
    }
  }
  return unknown_;
}

// Location.callsite(callee, [caller]): CallSiteLoc(callee, caller). New reference.
PyObject *PythonApiBuilder::callsite_location(PyObject *callee, PyObject *caller) {
  PyObject *callers = PyList_New(1);
  if (!callers) return nullptr;
  PyList_SET_ITEM(callers, 0, Py_NewRef(caller));
  PyObject *args[3] = {callee, callers, context};
  PyObject *loc = call(bindings->loc_callsite, args, 2, kw_context);
  Py_DECREF(callers);
  return loc;
}

PyObject *PythonApiBuilder::kept_location(const RawFrame *kept, std::size_t m, bool *) {
  // New references throughout: building calls into the bindings, which may run a collection
  // or even re-enter here; nothing borrowed from the tables is held across such a call.
  if (m == 0) return unknown_location();
  if (m == 1) return frame_location(kept[0]);
  // The longest cached suffix S_i = callsite(f_i at S_{i+1}) (S_{m-1} = f_{m-1}), then the
  // missing links: in a long straight-line kernel only the innermost link is new per op.
  detail::SmallBuffer<std::uint64_t, kInlineChain> hash_room;
  if (!hash_room.reserve(m)) return PyErr_NoMemory();
  std::uint64_t *hashes = hash_room.data();
  for (std::size_t i = 0; i + 1 < m; ++i) hashes[i] = detail::hash_frames(kept + i, m - i, 0);
  const auto any = [](PyObject *) { return true; };
  std::size_t i = 0;
  PyObject *tail = nullptr;
  for (; i + 1 < m; ++i)
    if (PyObject *const *hit = chains_.find(hashes[i], kept + i, m - i, any)) {
      tail = *hit;
      break;
    }
  if (!tail) {
    i = m - 1;
    tail = frame_location(kept[m - 1]);
  }
  Py_XINCREF(tail);
  while (tail && i-- > 0) {
    PyObject *callee = Py_XNewRef(frame_location(kept[i]));
    PyObject *link = callee ? callsite_location(callee, tail) : nullptr;
    Py_XDECREF(callee);
    Py_DECREF(tail);
    tail = link;
    if (!link) break;
    if (!chains_.insert(hashes[i], kept + i, m - i, link)) {
      Py_CLEAR(tail);
      PyErr_NoMemory();
      break;
    }
    Py_INCREF(link);  // the table's reference
    ++held_;
  }
  // Borrowed from here on: the chain table (or the frame table, for the outermost) holds it.
  Py_XDECREF(tail);
  return tail;
}

PyObject *PythonApiBuilder::nameloc_wrap(PyObject *current, PyObject *inner, bool own_inner) {
  if (PyObject *hit = wraps_.find(current, inner)) return hit;
  std::vector<PyObject *> names;  // outermost first, as Location.current nests them
  for (PyObject *cur = as_nameloc(bindings, current); cur;) {
    PyObject *name = PyObject_GetAttr(cur, str_name_str);
    PyObject *child = name ? PyObject_GetAttr(cur, str_child_loc) : nullptr;
    Py_DECREF(cur);
    if (!child) {
      Py_XDECREF(name);
      for (PyObject *n : names) Py_DECREF(n);
      return nullptr;
    }
    names.push_back(name);
    cur = as_nameloc(bindings, child);
    Py_DECREF(child);
  }
  PyObject *loc = Py_NewRef(inner);
  for (auto it = names.rbegin(); it != names.rend() && loc; ++it) {
    PyObject *args[3] = {*it, loc, context};
    PyObject *next = call(bindings->loc_name, args, 1, kw_child_context);
    Py_DECREF(loc);
    loc = next;
  }
  for (PyObject *n : names) Py_DECREF(n);
  if (!loc) return nullptr;
  // The table is looked up again inside: building called into the bindings.
  return wraps_.store(current, inner, loc, own_inner);
}

void PythonApiBuilder::clear_sequences() noexcept {
  wraps_.clear();
  held_ -= chains_.size();
  chains_.clear([](PyObject *loc) { Py_DECREF(loc); });
}

void PythonApiBuilder::clear_all() noexcept {
  clear_sequences();  // chains may borrow per-frame locations
  std::vector<PyObject *> drop;  // released once the tables are consistent (dealloc may re-enter)
  std::vector<RawFrame> keys;
  for (auto &kv : frames_) {
    drop.push_back(kv.second);
    keys.push_back(kv.first);
  }
  frames_.clear();
  if (unknown_) drop.push_back(unknown_);
  unknown_ = nullptr;
  held_ -= drop.size();
  for (PyObject *o : drop) Py_DECREF(o);
  for (const RawFrame &k : keys) release(k);
}

}  // namespace

std::unique_ptr<LocationBuilder> make_python_builder(BindingsObject *b, PyObject *context) noexcept {
  std::unique_ptr<LocationBuilder> builder(new (std::nothrow) PythonApiBuilder(b, context));
  if (!builder) PyErr_NoMemory();
  return builder;
}

bool init_build_python() noexcept {
  if (kw_context) return true;
  kw_context = Py_BuildValue("(s)", "context");
  kw_child_context = Py_BuildValue("(ss)", "childLoc", "context");
  str_name_str = PyUnicode_InternFromString("name_str");
  str_child_loc = PyUnicode_InternFromString("child_loc");
  str_is_a_name = PyUnicode_InternFromString("is_a_name");
  return kw_context && kw_child_context && str_name_str && str_child_loc && str_is_a_name;
}

}  // namespace callsite::mlir
