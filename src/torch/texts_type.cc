// torch/texts_type.cc — callsite._callsite._TorchTexts: torch.fx's recording block of
// TracerBase.create_node for one set of torch's filter rules, one call per node: the capture,
// torch's filter decisions (cached per (file, function name)), the kept frames' text (a stack
// seen before from torch/raw_texts.h, else from torch/text_tables.h) and the node's metadata.
#include "torch/texts_type.h"

#include <climits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "callsite/frame.h"
#include "capture/boundary.h"
#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "core/compat.h"
#include "core/stack_table.h"
#include "render/stack_summary.h"
#include "symbolize/code_info.h"
#include "torch/raw_texts.h"
#include "torch/text_tables.h"

namespace callsite::torch {
namespace {

// Decision bits, as callsite.torch's _decision: named forward; kept by forward-only mode;
// not in an uninteresting file.
constexpr std::uint8_t kForward = 1, kForwardOnly = 2, kInteresting = 4;

struct PairHash {
  std::size_t operator()(const std::pair<PyObject *, PyObject *> &p) const noexcept {
    return std::size_t((std::uintptr_t(p.first) >> 4) * 0x9E3779B97F4A7C15ull ^
                       (std::uintptr_t(p.second) >> 4));
  }
};

/// (file, name) -> decision bits; both strs held by the table.
using Decisions = std::unordered_map<std::pair<PyObject *, PyObject *>, std::uint8_t, PairHash>;


struct TextsObject {
  PyObject_HEAD
  PyObject *uninteresting;  // frozenset of file names (torch's uninteresting_files())
  PyObject *anchors;        // frozenset of (file, name) (torch.fx.proxy._STACK_TRACE_ANCHORS)
  PyObject *recorded;       // the tuple subclass of node.meta["_callsite_traceback"]
  PyObject *linecache;      // the linecache module (its `cache` read per node)
  Decisions *decisions;
  RawTable *raw;  // the stacks recorded under these rules
};

inline TextsObject *as_texts(PyObject *o) { return reinterpret_cast<TextsObject *>(o); }

PyObject *str_stack_trace = nullptr, *str_meta_key = nullptr, *str_cache = nullptr,
         *str_forward = nullptr, *str_torch_init = nullptr;

bool init_strings() noexcept {
  if (str_stack_trace) return true;
  str_stack_trace = PyUnicode_InternFromString("stack_trace");
  str_meta_key = PyUnicode_InternFromString("_callsite_traceback");
  str_cache = PyUnicode_InternFromString("cache");
  str_forward = PyUnicode_InternFromString("forward");
  str_torch_init = PyUnicode_InternFromString("torch/__init__.py");
  return str_stack_trace && str_meta_key && str_cache && str_forward && str_torch_init;
}

void release_decisions(Decisions &d) noexcept {
  std::vector<PyObject *> garbage;
  try {
    TableLock lock;
    garbage.reserve(2 * d.size());
    for (auto &item : d) {
      garbage.push_back(item.first.first);
      garbage.push_back(item.first.second);
    }
    d.clear();
  } catch (const std::bad_alloc &) {
  }
  for (PyObject *o : garbage) Py_DECREF(o);
}

PyObject *texts_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"uninteresting", "anchors", "recorded", nullptr};
  PyObject *uninteresting, *anchors, *recorded;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OOO:_TorchTexts", const_cast<char **>(kwlist),
                                   &uninteresting, &anchors, &recorded))
    return nullptr;
  for (auto [set, name] : {std::pair{uninteresting, "uninteresting"}, {anchors, "anchors"}}) {
    if (!PyFrozenSet_CheckExact(set)) {
      PyErr_Format(PyExc_TypeError, "_TorchTexts: %s must be a frozenset, not %.200s", name,
                   Py_TYPE(set)->tp_name);
      return nullptr;
    }
  }
  if (!PyType_Check(recorded) ||
      !PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(recorded), &PyTuple_Type)) {
    PyErr_Format(PyExc_TypeError, "_TorchTexts: recorded must be a subclass of tuple, not %R",
                 recorded);
    return nullptr;
  }
  if (!init_strings()) return nullptr;
  PyObject *linecache = PyImport_ImportModule("linecache");
  if (!linecache) return nullptr;
  auto *self = reinterpret_cast<TextsObject *>(type->tp_alloc(type, 0));
  if (!self) {
    Py_DECREF(linecache);
    return nullptr;
  }
  self->decisions = new (std::nothrow) Decisions();
  self->raw = new (std::nothrow) RawTable();
  if (!self->decisions || !self->raw) {
    Py_DECREF(linecache);
    Py_DECREF(reinterpret_cast<PyObject *>(self));
    return PyErr_NoMemory();
  }
  self->uninteresting = Py_NewRef(uninteresting);
  self->anchors = Py_NewRef(anchors);
  self->recorded = Py_NewRef(recorded);
  self->linecache = linecache;
  return reinterpret_cast<PyObject *>(self);
}

int texts_traverse(PyObject *self, visitproc visit, void *arg) {
  TextsObject *t = as_texts(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(t->uninteresting);
  Py_VISIT(t->anchors);
  Py_VISIT(t->recorded);
  Py_VISIT(t->linecache);
  return 0;
}

int texts_clear(PyObject *self) {
  TextsObject *t = as_texts(self);
  Py_CLEAR(t->uninteresting);
  Py_CLEAR(t->anchors);
  Py_CLEAR(t->recorded);
  Py_CLEAR(t->linecache);
  return 0;
}

void texts_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  TextsObject *t = as_texts(self);
  if (Decisions *d = t->decisions) {
    t->decisions = nullptr;
    release_decisions(*d);  // strs only: no finalizer runs
    delete d;
  }
  if (RawTable *r = t->raw) {
    t->raw = nullptr;
    release_raw(*r);
    delete r;
  }
  texts_clear(self);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

/// Whether `set` contains `key`: a frozenset's lookup may compare with its members (their
/// __eq__ may run anything); the caller holds what it uses.
int contains(PyObject *set, PyObject *key) noexcept {
  Py_INCREF(set);
  const int found = PySet_Contains(set, key);
  Py_DECREF(set);
  return found;
}

/// The decision bits of (file, name): torch's default filter reads only a frame's file and
/// function name (named forward; kept by forward-only mode: named forward, in
/// torch/__init__.py or an anchor; not in an uninteresting file). Cached by the strs'
/// identity; `store` false looks up only (strs made afresh per call would fill the table).
/// -1 with an error set.
int decision(TextsObject *self, PyObject *file, PyObject *name, bool store = true) noexcept {
  Decisions *d = self->decisions;
  {
    TableLock lock;
    auto it = d->find({file, name});
    if (it != d->end()) return it->second;
  }
  const bool forward = PyUnicode_Compare(name, str_forward) == 0;
  bool forward_only = forward;
  if (!forward_only) {
    const Py_ssize_t tail = PyUnicode_Tailmatch(file, str_torch_init, 0, PY_SSIZE_T_MAX, 1);
    if (tail < 0) return -1;
    forward_only = tail == 1;
  }
  if (!forward_only) {
    PyObject *key = PyTuple_Pack(2, file, name);
    const int found = key ? contains(self->anchors, key) : -1;  // the set held across it
    Py_XDECREF(key);
    if (found < 0) return -1;
    forward_only = found == 1;
  }
  const int boring = contains(self->uninteresting, file);
  if (boring < 0) return -1;
  const int result = (forward ? kForward : 0) | (forward_only ? kForwardOnly : 0) |
                     (boring ? 0 : kInteresting);
  if (store && self->decisions) {
    try {
      TableLock lock;
      auto inserted = self->decisions->emplace(std::make_pair(file, name), std::uint8_t(result));
      if (inserted.second) {
        Py_INCREF(file);
        Py_INCREF(name);
      }
    } catch (const std::bad_alloc &) {  // not cached: decided again next time
    }
  }
  return result;
}

/// Calls keep(i) for each frame i (outermost first, by its decision bits) torch's default
/// filter keeps: in forward-only mode the frames kept by that mode, else every frame from the
/// first one named forward on; in both, only frames outside uninteresting files.
template <class Keep>
void select_kept(const std::uint8_t *bits, std::size_t n, bool forward_only, Keep &&keep) {
  if (forward_only) {
    for (std::size_t i = 0; i < n; ++i)
      if ((bits[i] & (kForwardOnly | kInteresting)) == (kForwardOnly | kInteresting)) keep(i);
    return;
  }
  std::size_t first = 0;
  while (first < n && !(bits[first] & kForward)) ++first;
  for (std::size_t i = first; i < n; ++i)
    if (bits[i] & kInteresting) keep(i);
}

/// The text of `tb`'s stack, through the decisions and the process-wide tables: a new
/// reference (None: no frame kept), `*python` set instead when the stack has a frame this path
/// does not describe, nullptr with an error.
/// `tb`'s frames outermost first, as torch's walk describes them (file, name, line): false
/// with `*python` set when a frame is one this path does not describe (a native frame, a file
/// or name that is a str subclass, whose methods the caller's Python path lets run; a frame
/// without a line), false with an error set otherwise.
bool frame_keys(PyObject *tb, std::vector<FrameKey> &frames, bool *python) {
  const std::size_t n = traceback_size(tb);
  const RawFrame *raw = traceback_frames(tb);
  frames.reserve(n);
  for (std::size_t i = n; i-- > 0;) {  // outermost first
    const RawFrame &f = raw[i];
    if (!f.is_python()) {
      *python = true;
      return false;
    }
    auto *code = static_cast<PyCodeObject *>(f.code());
    PyObject *file = code->co_filename, *name = code->co_name;
    if (!PyUnicode_CheckExact(file) || !PyUnicode_CheckExact(name)) {
      *python = true;
      return false;
    }
    detail::Position pos;
    if (!detail::code_position(code, f.lasti(), &pos)) return false;
    if (pos.lineno < 0) {
      *python = true;
      return false;
    }
    frames.push_back(FrameKey{file, name, pos.lineno});
  }
  return true;
}

/// The text of `kept` (outermost first, borrowed from code objects the caller holds) through
/// the process-wide tables: a new reference (None when `kept` is empty), nullptr with an error.
PyObject *kept_text(PyObject *cache, const std::vector<FrameKey> &kept, FileVersions *files) {
  if (kept.empty()) return Py_NewRef(Py_None);
  return stack_text(cache, kept.data(), kept.size(), files);
}

PyObject *text_of(TextsObject *self, PyObject *tb, bool forward_only, PyObject *cache,
                  FileVersions &files, bool *python) {
  std::vector<FrameKey> frames, kept;
  std::vector<std::uint8_t> bits;
  if (!frame_keys(tb, frames, python)) return nullptr;
  // The code objects (and so these strs) are held by `tb` from here on.
  bits.resize(frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    const int b = decision(self, frames[i].file, frames[i].name);
    if (b < 0) return nullptr;
    bits[i] = std::uint8_t(b);
  }
  kept.reserve(frames.size());
  select_kept(bits.data(), bits.size(), forward_only,
              [&](std::size_t i) { kept.push_back(frames[i]); });
  return kept_text(cache, kept, &files);
}

/// Whether a METH_FASTCALL method got its two arguments; a TypeError naming them otherwise.
bool two_arguments(const char *method, const char *names, Py_ssize_t nargs) {
  if (nargs == 2) return true;
  PyErr_Format(PyExc_TypeError, "%s() takes 2 arguments (%s), got %zd", method, names, nargs);
  return false;
}

/// recorded((tb, text)), a new reference or nullptr with an error. A tuple subclass whose
/// construction is still tuple's own (no __new__ nor __init__ of its own: callsite.torch's
/// _Recorded) is allocated and filled here, as tuple_subtype_new would (Objects/tupleobject.c),
/// without the argument tuple and the type call per node; any other is called.
PyObject *new_recorded(PyObject *recorded, PyObject *tb, PyObject *text) {
  auto *type = reinterpret_cast<PyTypeObject *>(recorded);  // a tuple subclass: texts_new
  if (type->tp_new == PyTuple_Type.tp_new && type->tp_init == PyBaseObject_Type.tp_init &&
      type->tp_alloc == PyType_GenericAlloc) {
    PyObject *pair = type->tp_alloc(type, 2);  // zeroed items, ob_size 2, tracked by the gc
    if (!pair) return nullptr;
    compat::reset_tuple_hash(pair);
    PyTuple_SET_ITEM(pair, 0, Py_NewRef(tb));
    PyTuple_SET_ITEM(pair, 1, Py_NewRef(text));
    return pair;
  }
  PyObject *args = PyTuple_Pack(2, tb, text);
  if (!args) return nullptr;
  PyObject *result = PyObject_CallOneArg(recorded, args);
  Py_DECREF(args);
  return result;
}

/// recorded((tb, text)) (a new reference), written to `meta` unless it is None: meta
/// ["stack_trace"] = text (when not None) and meta["_callsite_traceback"] = the result.
/// nullptr with an error.
PyObject *store_recorded(TextsObject *self, PyObject *meta, PyObject *tb, PyObject *text) {
  PyObject *recorded = self->recorded ? Py_NewRef(self->recorded) : nullptr;
  if (!recorded) {
    PyErr_SetString(PyExc_RuntimeError, "_TorchTexts: cleared");
    return nullptr;
  }
  PyObject *result = new_recorded(recorded, tb, text);
  Py_DECREF(recorded);
  if (result && meta != Py_None) {
    if ((text != Py_None && PyObject_SetItem(meta, str_stack_trace, text) < 0) ||
        PyObject_SetItem(meta, str_meta_key, result) < 0)
      Py_CLEAR(result);
  }
  return result;
}

/// linecache.cache, a new reference (nullptr with an error).
PyObject *linecache_cache(TextsObject *self) {
  if (!self->linecache) {
    PyErr_SetString(PyExc_RuntimeError, "_TorchTexts: cleared");
    return nullptr;
  }
  PyObject *linecache = Py_NewRef(self->linecache);
  PyObject *cache = PyObject_GetAttr(linecache, str_cache);
  Py_DECREF(linecache);
  return cache;
}

/// record_kept()'s work on `tb`, held by the caller with `self`: see the docstring below.
PyObject *record_kept_stack(TextsObject *self, PyObject *meta, PyObject *tb) {
  std::vector<FrameKey> frames;
  bool python = false;
  if (!frame_keys(tb, frames, &python)) return python ? Py_NewRef(tb) : nullptr;
  PyObject *cache = linecache_cache(self);
  if (!cache) return nullptr;
  PyObject *text = kept_text(cache, frames, nullptr);
  Py_DECREF(cache);
  if (!text) return nullptr;
  PyObject *result = store_recorded(self, meta, tb, text);
  Py_DECREF(text);
  return result;
}

// record_kept(meta, traceback, /): see the docstring below.
PyObject *texts_record_kept(PyObject *self_obj, PyObject *const *args, Py_ssize_t nargs) {
  if (!two_arguments("record_kept", "meta, traceback", nargs)) return nullptr;
  PyObject *meta = args[0], *tb = args[1];
  if (!is_traceback(tb)) {
    PyErr_Format(PyExc_TypeError,
                 "record_kept(): traceback must be a callsite.Traceback, not %.200s",
                 Py_TYPE(tb)->tp_name);
    return nullptr;
  }
  Py_INCREF(self_obj);  // held across every call into Python below
  Py_INCREF(tb);        // its code objects hold the frames' strs
  PyObject *result = nullptr;
  try {
    result = record_kept_stack(as_texts(self_obj), meta, tb);
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  }
  Py_DECREF(tb);
  Py_DECREF(self_obj);
  return result;
}

/// `frames` (a list of (file, line, name) tuples, line an int or None; with `exact_names`,
/// file and name exact strs) as frames borrowed from `*held`, a tuple copy of the list (a new
/// reference or nullptr, which the caller releases either way): a decision or the formatting
/// may run code that changes the caller's list. false with a TypeError naming `method`.
bool named_frames(const char *method, PyObject *frames, bool exact_names, PyObject **held,
                  std::vector<detail::NamedFrame> &out) {
  if (!PyList_CheckExact(frames)) {
    PyErr_Format(PyExc_TypeError, "%s(): frames must be a list, not %.200s", method,
                 Py_TYPE(frames)->tp_name);
    return false;
  }
  if (!(*held = PyList_AsTuple(frames))) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(*held);
  out.reserve(std::size_t(n));
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *item = PyTuple_GET_ITEM(*held, i);
    bool ok = PyTuple_Check(item) && PyTuple_GET_SIZE(item) == 3;
    long value = -1;  // line None
    if (ok && PyTuple_GET_ITEM(item, 1) != Py_None) {
      PyObject *line = PyTuple_GET_ITEM(item, 1);
      value = PyLong_Check(line) ? PyLong_AsLong(line) : -2;
      if (value == -1 && PyErr_Occurred()) PyErr_Clear();
      ok = value >= 0 && value <= INT_MAX;
    }
    if (ok && exact_names)
      ok = PyUnicode_CheckExact(PyTuple_GET_ITEM(item, 0)) &&
           PyUnicode_CheckExact(PyTuple_GET_ITEM(item, 2));
    if (!ok) {
      PyErr_Format(PyExc_TypeError,
                   "%s(): frames must hold (file, line, name) tuples, line an int from 0 to "
                   "%d or None%s, not %R",
                   method, INT_MAX, exact_names ? ", file and name str" : "", item);
      return false;
    }
    out.push_back({PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 2), int(value)});
  }
  return true;
}

// kept(frames, forward_only, /): see the docstring below.
PyObject *texts_kept(PyObject *self_obj, PyObject *const *args, Py_ssize_t nargs) {
  if (!two_arguments("kept", "frames, forward_only", nargs)) return nullptr;
  const int forward_only = PyObject_IsTrue(args[1]);
  if (forward_only < 0) return nullptr;
  TextsObject *self = as_texts(self_obj);
  if (!self->decisions) {
    PyErr_SetString(PyExc_RuntimeError, "_TorchTexts: cleared");
    return nullptr;
  }
  Py_INCREF(self_obj);
  PyObject *held = nullptr, *result = nullptr;
  try {
    std::vector<detail::NamedFrame> named;
    if (named_frames("kept", args[0], true, &held, named)) {
      const std::size_t n = named.size();
      std::vector<std::uint8_t> bits(n);
      std::size_t i = 0;
      for (; i < n; ++i) {
        const int b = decision(self, named[i].file, named[i].name, false);
        if (b < 0) break;
        bits[i] = std::uint8_t(b);
      }
      if (i == n && (result = PyList_New(0))) {
        select_kept(bits.data(), n, forward_only != 0, [&](std::size_t k) {
          if (result && PyList_Append(result, PyTuple_GET_ITEM(held, Py_ssize_t(k))) < 0)
            Py_CLEAR(result);
        });
      }
    }
  } catch (const std::bad_alloc &) {
    Py_CLEAR(result);
    PyErr_NoMemory();
  }
  Py_XDECREF(held);
  Py_DECREF(self_obj);
  return result;
}

// summary(frames, /) and text(frames, /): see the docstrings below.
template <PyObject *(*Make)(const detail::NamedFrame *, std::size_t)>
PyObject *texts_formatted(PyObject *, PyObject *frames) {
  const char *method = Make == cpython_text ? "text" : "summary";
  PyObject *held = nullptr, *result = nullptr;
  try {
    std::vector<detail::NamedFrame> named;
    if (named_frames(method, frames, false, &held, named))
      result = Make(named.data(), named.size());
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
  }
  Py_XDECREF(held);
  return result;
}

/// The calling thread's whole stack after `skip` frames, as torch's walk sees it: a kernel
/// boundary open around the trace (callsite.boundary, an MLIR scope's) lives in the current
/// context (capture/boundary.h) and would end the walk at its kernel, so the capture runs in a
/// new, empty context (PyContext_New: no context variable set). New reference, or nullptr with
/// an error.
PyObject *capture_whole_stack(std::size_t skip) {
  if (!boundary_chain()) return callsite::capture(skip, SIZE_MAX);
  PyObject *empty = PyContext_New();
  if (!empty) return nullptr;
  if (PyContext_Enter(empty) < 0) {
    Py_DECREF(empty);
    return nullptr;
  }
  PyObject *tb = callsite::capture(skip, SIZE_MAX);
  if (PyContext_Exit(empty) < 0) Py_CLEAR(tb);
  Py_DECREF(empty);
  return tb;
}

/// The text of the whole-Python stack `tb` (innermost first): the raw table's when this stack
/// was recorded before and linecache still holds the copies its text was made from, else made
/// through the decisions and the process-wide tables, and stored. A new reference (None: no
/// frame kept); nullptr with `*python` set for a frame this path does not describe, nullptr
/// with an error otherwise.
PyObject *stack_text_of(TextsObject *self, PyObject *tb, PyObject *cache, bool forward_only,
                        bool *python) {
  const std::size_t n = traceback_size(tb);
  const RawFrame *raw = traceback_frames(tb);
  const std::uint64_t h = detail::hash_frames(raw, n, std::uint64_t(forward_only));
  struct Held {  // released on every way out, a std::bad_alloc included
    FileVersions files;
    ~Held() { release_versions(files); }
  } held;
  PyObject *text = raw_lookup(*self->raw, h, raw, n, forward_only, held.files);
  if (text) {
    bool same;
    const bool checked = copies_unchanged(cache, held.files, &same);
    release_versions(held.files);
    if (checked && same) return text;
    Py_DECREF(text);
    if (!checked) return nullptr;
  }
  text = text_of(self, tb, forward_only, cache, held.files, python);
  if (text && self->raw) raw_store(*self->raw, h, raw, n, forward_only, text, held.files);
  return text;
}

/// record()'s work on the captured `tb`, held by the caller with `self`: see the docstring
/// below.
PyObject *record_stack(TextsObject *self, PyObject *meta, PyObject *tb, bool forward_only) {
  if (!self->decisions || !self->raw || !self->recorded || !self->linecache) {
    PyErr_SetString(PyExc_RuntimeError, "_TorchTexts: cleared");
    return nullptr;
  }
  // A native frame (its reifier may run Python code, and torch's walk may or may not see it):
  // the caller's Python path, with this capture.
  const std::size_t n = traceback_size(tb);
  const RawFrame *raw = traceback_frames(tb);
  for (std::size_t i = 0; i < n; ++i)
    if (!raw[i].is_python()) return Py_NewRef(tb);
  PyObject *cache = linecache_cache(self);
  if (!cache) return nullptr;
  bool python = false;
  PyObject *text = stack_text_of(self, tb, cache, forward_only, &python);
  Py_DECREF(cache);
  if (!text) return python ? Py_NewRef(tb) : nullptr;
  PyObject *result = store_recorded(self, meta, tb, text);
  Py_DECREF(text);
  return result;
}

// record(meta, forward_only, /): see the docstring below.
PyObject *texts_record(PyObject *self_obj, PyObject *const *args, Py_ssize_t nargs) {
  if (!two_arguments("record", "meta, forward_only", nargs)) return nullptr;
  const int forward_only = PyObject_IsTrue(args[1]);
  if (forward_only < 0) return nullptr;
  Py_INCREF(self_obj);  // held across every call into Python below
  // Innermost first, as capture(1) in the caller gives it: the caller's frame dropped.
  PyObject *tb = capture_whole_stack(1), *result = nullptr;
  if (tb) {
    try {
      result = record_stack(as_texts(self_obj), args[0], tb, forward_only != 0);
    } catch (const std::bad_alloc &) {
      PyErr_NoMemory();
    }
    Py_DECREF(tb);
  }
  Py_DECREF(self_obj);
  return result;
}

PyObject *texts_clear_caches(PyObject *self, PyObject *) {
  if (Decisions *d = as_texts(self)->decisions) release_decisions(*d);
  if (RawTable *r = as_texts(self)->raw) release_raw(*r);
  Py_RETURN_NONE;
}

PyObject *texts_decision_count(PyObject *self, PyObject *) {
  Decisions *d = as_texts(self)->decisions;
  std::size_t n = 0;
  if (d) {
    TableLock lock;
    n = d->size();
  }
  return PyLong_FromSize_t(n);
}

PyObject *texts_stack_count(PyObject *self, PyObject *) {
  RawTable *r = as_texts(self)->raw;
  std::size_t n = 0;
  if (r) {
    TableLock lock;
    n = r->entries.size();
  }
  return PyLong_FromSize_t(n);
}

PyObject *texts_clear_tables(PyObject *, PyObject *) {
  clear_text_tables();
  Py_RETURN_NONE;
}

PyObject *texts_cached_texts(PyObject *, PyObject *) {
  return PyLong_FromSize_t(stack_text_count());
}

PyMethodDef texts_methods[] = {
    {"record", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(texts_record)),
     METH_FASTCALL,
     "record($self, meta, forward_only, /)\n--\n\n"
     "Records the calling create_node's node: captures the whole stack (the caller's frame\n"
     "dropped; an open kernel boundary does not end it, as it does not end torch's walk),\n"
     "keeps the frames torch's default filter keeps (forward_only: its forward-only mode) and\n"
     "returns recorded((traceback, text)), text None when no frame is kept. Unless meta is\n"
     "None, writes meta['stack_trace'] = text (when not None) and\n"
     "meta['_callsite_traceback'] = the result. Returns the Traceback alone (writing nothing)\n"
     "when the stack has a frame it does not describe (a native frame, a name that is a str\n"
     "subclass, a frame without a line): the caller records it in Python."},
    {"kept", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(texts_kept)),
     METH_FASTCALL,
     "kept($self, frames, forward_only, /)\n--\n\n"
     "The frames (a list of (file, line, name) tuples, outermost first) torch's default\n"
     "filter keeps under these rules, in order: the one place those rules are written, for\n"
     "callsite.torch's Python path too."},
    {"record_kept",
     reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(texts_record_kept)),
     METH_FASTCALL,
     "record_kept($self, meta, traceback, /)\n--\n\n"
     "Records a node whose frames are chosen already: `traceback` (innermost first, every\n"
     "frame kept) gets torch's text of its frames (StackSummary.format, outermost first,\n"
     "stripped). Returns recorded((traceback, text)), text None when the traceback is empty,\n"
     "written to meta as record() writes it; the traceback alone (writing nothing) when it\n"
     "has a frame this path does not describe, for the caller's Python path."},
    {"summary", texts_formatted<detail::named_summary>, METH_O | METH_STATIC,
     "summary(frames, /)\n--\n\n"
     "A traceback.StackSummary of FrameSummary(file, line, name, lookup_line=False) for\n"
     "frames, a list of (file, line, name) tuples (outermost first, line an int or None): the\n"
     "summary torch's walk gives a tracer's own _filter_traceback_frames."},
    {"text", texts_formatted<cpython_text>, METH_O | METH_STATIC,
     "text(frames, /)\n--\n\n"
     "torch's text of frames (a list of (file, line, name) tuples, outermost first):\n"
     "''.join(summary(frames).format()).strip(), as StackSummary.format writes it (lines\n"
     "read through linecache)."},
    {"clear", texts_clear_caches, METH_NOARGS,
     "clear($self, /)\n--\n\nDrops the cached filter decisions and the stacks recorded."},
    {"decision_count", texts_decision_count, METH_NOARGS,
     "decision_count($self, /)\n--\n\nNumber of cached (file, name) filter decisions."},
    {"stack_count", texts_stack_count, METH_NOARGS,
     "stack_count($self, /)\n--\n\nNumber of raw stacks recorded under these rules."},
    {"clear_tables", texts_clear_tables, METH_NOARGS | METH_STATIC,
     "clear_tables()\n--\n\nEmpties the process-wide tables of texts and file copies."},
    {"cached_texts", texts_cached_texts, METH_NOARGS | METH_STATIC,
     "cached_texts()\n--\n\nNumber of stack texts the process-wide table holds."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot texts_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "_TorchTexts(uninteresting, anchors, recorded): torch.fx's node recording "
                    "under one set of torch's filter rules (callsite.torch's, internal).")},
    {Py_tp_new, reinterpret_cast<void *>(texts_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(texts_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(texts_traverse)},
    {Py_tp_clear, reinterpret_cast<void *>(texts_clear)},
    {Py_tp_methods, texts_methods},
    {0, nullptr}};

PyType_Spec texts_spec = {"callsite._callsite._TorchTexts", int(sizeof(TextsObject)), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, texts_slots};

PyTypeObject *texts_type = nullptr;

}  // namespace

PyTypeObject *init_texts_type() noexcept {
  if (!texts_type) texts_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&texts_spec));
  return texts_type;
}

}  // namespace callsite::torch
