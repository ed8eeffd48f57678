// torch/texts_type.cc — callsite._callsite._TorchTexts: torch.fx's recording block of
// TracerBase.create_node for one set of torch's filter rules, one call per node: the capture,
// torch's filter decisions (cached per (file, function name)), the kept frames' text (from
// torch/text_tables.h) and the node's metadata.
#include "torch/texts_type.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "callsite/frame.h"
#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "symbolize/code_info.h"
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
  PyObject *file_state, *format_frame, *format_stack;  // torch/text_tables.h's Callbacks
  PyObject *linecache;      // the linecache module (its `cache` read per node)
  Decisions *decisions;
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
  static const char *kwlist[] = {"uninteresting", "anchors", "recorded", "file_state",
                                 "format_frame", "format_stack", nullptr};
  PyObject *uninteresting, *anchors, *recorded, *file_state, *format_frame, *format_stack;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O!O!O!OOO:_TorchTexts",
                                   const_cast<char **>(kwlist), &PyFrozenSet_Type, &uninteresting,
                                   &PyFrozenSet_Type, &anchors, &PyType_Type, &recorded,
                                   &file_state, &format_frame, &format_stack))
    return nullptr;
  if (!PyType_IsSubtype(reinterpret_cast<PyTypeObject *>(recorded), &PyTuple_Type)) {
    PyErr_Format(PyExc_TypeError, "_TorchTexts: recorded must be a subclass of tuple, not %.200s",
                 reinterpret_cast<PyTypeObject *>(recorded)->tp_name);
    return nullptr;
  }
  PyObject *callbacks[] = {file_state, format_frame, format_stack};
  const char *names[] = {"file_state", "format_frame", "format_stack"};
  for (int i = 0; i < 3; ++i) {
    if (!PyCallable_Check(callbacks[i])) {
      PyErr_Format(PyExc_TypeError, "_TorchTexts: %s must be callable, not %.200s", names[i],
                   Py_TYPE(callbacks[i])->tp_name);
      return nullptr;
    }
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
  if (!self->decisions) {
    Py_DECREF(linecache);
    Py_DECREF(reinterpret_cast<PyObject *>(self));
    return PyErr_NoMemory();
  }
  self->uninteresting = Py_NewRef(uninteresting);
  self->anchors = Py_NewRef(anchors);
  self->recorded = Py_NewRef(recorded);
  self->file_state = Py_NewRef(file_state);
  self->format_frame = Py_NewRef(format_frame);
  self->format_stack = Py_NewRef(format_stack);
  self->linecache = linecache;
  return reinterpret_cast<PyObject *>(self);
}

int texts_traverse(PyObject *self, visitproc visit, void *arg) {
  TextsObject *t = as_texts(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(t->uninteresting);
  Py_VISIT(t->anchors);
  Py_VISIT(t->recorded);
  Py_VISIT(t->file_state);
  Py_VISIT(t->format_frame);
  Py_VISIT(t->format_stack);
  Py_VISIT(t->linecache);
  return 0;
}

int texts_clear(PyObject *self) {
  TextsObject *t = as_texts(self);
  Py_CLEAR(t->uninteresting);
  Py_CLEAR(t->anchors);
  Py_CLEAR(t->recorded);
  Py_CLEAR(t->file_state);
  Py_CLEAR(t->format_frame);
  Py_CLEAR(t->format_stack);
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

/// The decision bits of (file, name), computed on a miss as callsite.torch's _decision does.
/// -1 with an error set.
int decision(TextsObject *self, PyObject *file, PyObject *name) noexcept {
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
  // Both sets held across the lookups (their members' __eq__ may replace this object's).
  PyObject *anchors = Py_NewRef(self->anchors), *uninteresting = Py_NewRef(self->uninteresting);
  int result = -1;
  if (!forward_only) {
    PyObject *key = PyTuple_Pack(2, file, name);
    const int found = key ? contains(anchors, key) : -1;
    Py_XDECREF(key);
    if (found < 0) goto done;
    forward_only = found == 1;
  }
  {
    const int boring = contains(uninteresting, file);
    if (boring < 0) goto done;
    result = (forward ? kForward : 0) | (forward_only ? kForwardOnly : 0) |
             (boring ? 0 : kInteresting);
  }
  if (self->decisions) {
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
done:
  Py_DECREF(anchors);
  Py_DECREF(uninteresting);
  return result;
}

// record(meta, forward_only, /): see the docstring below.
PyObject *texts_record(PyObject *self_obj, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 2) {
    PyErr_Format(PyExc_TypeError, "record() takes 2 arguments (meta, forward_only), got %zd",
                 nargs);
    return nullptr;
  }
  PyObject *meta = args[0];
  const int forward_only = PyObject_IsTrue(args[1]);
  if (forward_only < 0) return nullptr;
  Py_INCREF(self_obj);  // held across every call into Python below
  TextsObject *self = as_texts(self_obj);
  // Innermost first, as capture(1) in the caller gives it: the caller's frame dropped.
  PyObject *tb = callsite::capture(1, SIZE_MAX);
  PyObject *result = nullptr, *text = nullptr, *cache = nullptr;
  std::vector<FrameKey> frames, kept;
  std::vector<std::uint8_t> bits;
  if (!tb) goto done;
  if (!self->decisions || !self->recorded) {
    PyErr_SetString(PyExc_RuntimeError, "_TorchTexts: cleared");
    goto done;
  }
  try {
    const std::size_t n = traceback_size(tb);
    const RawFrame *raw = traceback_frames(tb);
    frames.reserve(n);
    for (std::size_t i = n; i-- > 0;) {  // outermost first
      const RawFrame &f = raw[i];
      // A native frame (its reifier may run Python code, and torch's walk may or may not see
      // it), a str subclass, a frame without a line: the caller's Python path, with this
      // capture.
      if (!f.is_python()) {
        result = Py_NewRef(tb);
        goto done;
      }
      auto *code = static_cast<PyCodeObject *>(f.code());
      PyObject *file = code->co_filename, *name = code->co_name;
      if (!PyUnicode_CheckExact(file) || !PyUnicode_CheckExact(name)) {
        result = Py_NewRef(tb);
        goto done;
      }
      detail::Position pos;
      if (!detail::code_position(code, f.lasti(), &pos)) goto done;
      if (pos.lineno < 0) {
        result = Py_NewRef(tb);
        goto done;
      }
      frames.push_back(FrameKey{file, name, pos.lineno});
    }
    // The code objects (and so these strs) are held by `tb` from here on.
    bits.resize(frames.size());
    for (std::size_t i = 0; i < frames.size(); ++i) {
      const int b = decision(self, frames[i].file, frames[i].name);
      if (b < 0) goto done;
      bits[i] = std::uint8_t(b);
    }
    kept.reserve(frames.size());
    if (forward_only) {
      for (std::size_t i = 0; i < frames.size(); ++i)
        if ((bits[i] & (kForwardOnly | kInteresting)) == (kForwardOnly | kInteresting))
          kept.push_back(frames[i]);
    } else {
      std::size_t first = 0;
      while (first < frames.size() && !(bits[first] & kForward)) ++first;
      for (std::size_t i = first; i < frames.size(); ++i)
        if (bits[i] & kInteresting) kept.push_back(frames[i]);
    }
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
    goto done;
  }
  if (!kept.empty()) {
    PyObject *linecache = Py_NewRef(self->linecache);
    cache = PyObject_GetAttr(linecache, str_cache);
    Py_DECREF(linecache);
    if (!cache) goto done;
    const Callbacks callbacks{self->file_state, self->format_frame, self->format_stack};
    Py_INCREF(callbacks.file_state);
    Py_INCREF(callbacks.format_frame);
    Py_INCREF(callbacks.format_stack);
    text = stack_text(callbacks, PyDict_CheckExact(cache) ? cache : nullptr, kept.data(),
                      kept.size());
    Py_DECREF(callbacks.file_state);
    Py_DECREF(callbacks.format_frame);
    Py_DECREF(callbacks.format_stack);
    if (!text) goto done;
  } else {
    text = Py_NewRef(Py_None);
  }
  {
    PyObject *pair = PyTuple_Pack(2, tb, text);
    if (!pair) goto done;
    PyObject *recorded = self->recorded ? Py_NewRef(self->recorded) : nullptr;
    if (!recorded) {
      Py_DECREF(pair);
      PyErr_SetString(PyExc_RuntimeError, "_TorchTexts: cleared");
      goto done;
    }
    result = PyObject_CallOneArg(recorded, pair);
    Py_DECREF(recorded);
    Py_DECREF(pair);
    if (!result) goto done;
  }
  if (meta != Py_None) {
    if ((text != Py_None && PyObject_SetItem(meta, str_stack_trace, text) < 0) ||
        PyObject_SetItem(meta, str_meta_key, result) < 0)
      Py_CLEAR(result);
  }
done:
  Py_XDECREF(cache);
  Py_XDECREF(text);
  Py_XDECREF(tb);
  Py_DECREF(self_obj);
  return result;
}

PyObject *texts_clear_decisions(PyObject *self, PyObject *) {
  if (Decisions *d = as_texts(self)->decisions) release_decisions(*d);
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
     "Records the calling create_node's node: captures the stack (the caller's frame dropped),\n"
     "keeps the frames torch's default filter keeps (forward_only: its forward-only mode) and\n"
     "returns recorded((traceback, text)), text None when no frame is kept. Unless meta is\n"
     "None, writes meta['stack_trace'] = text (when not None) and\n"
     "meta['_callsite_traceback'] = the result. Returns the Traceback alone (writing nothing)\n"
     "when the stack has a frame it does not describe (a native frame, a name that is a str\n"
     "subclass, a frame without a line): the caller records it in Python."},
    {"clear_decisions", texts_clear_decisions, METH_NOARGS,
     "clear_decisions($self, /)\n--\n\nDrops the cached filter decisions."},
    {"decision_count", texts_decision_count, METH_NOARGS,
     "decision_count($self, /)\n--\n\nNumber of cached (file, name) filter decisions."},
    {"clear_tables", texts_clear_tables, METH_NOARGS | METH_STATIC,
     "clear_tables()\n--\n\nEmpties the process-wide tables of texts and file copies."},
    {"cached_texts", texts_cached_texts, METH_NOARGS | METH_STATIC,
     "cached_texts()\n--\n\nNumber of stack texts the process-wide table holds."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot texts_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "_TorchTexts(uninteresting, anchors, recorded, file_state, format_frame, "
                    "format_stack): torch.fx's node recording under one set of torch's filter "
                    "rules (callsite.torch's, internal).")},
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
