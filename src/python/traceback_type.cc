// python/traceback_type.cc — callsite.Traceback's Python type: value semantics over the
// inline raw frames of capture/traceback_storage.h.
#include "python/traceback_type.h"

#include <cstring>
#include <string>
#include <vector>

#include "capture/frame_sources.h"
#include "capture/traceback_pool.h"
#include "capture/traceback_storage.h"
#include "core/args.h"
#include "core/frame_refs.h"
#include "filter/filter.h"
#include "native/frame_locals.h"
#include "python/frame_type.h"
#include "render/mlir_text.h"
#include "render/stack_summary.h"

namespace callsite::detail {

namespace {

inline TracebackObject *as_tb(PyObject *o) { return reinterpret_cast<TracebackObject *>(o); }

Py_ssize_t tb_length(PyObject *self) { return Py_SIZE(self); }

// The Frame of entry i. A native entry whose frames may have variables of their own (a
// recursion has several live activations of one executable, often at one state) knows which
// activation it is: how many equal entries are inner to it.
PyObject *frame_at(PyObject *self, Py_ssize_t i) {
  const RawFrame *frames = as_tb(self)->frames;
  std::size_t activation = 0;
  if (native::any_locals && !frames[i].is_python())
    for (Py_ssize_t j = 0; j < i; ++j) activation += frames[j] == frames[i];
  return new_frame(frames[i], activation);
}

PyObject *tb_item(PyObject *self, Py_ssize_t i) {
  if (i < 0 || i >= Py_SIZE(self)) {
    PyErr_SetString(PyExc_IndexError, "Traceback index out of range");
    return nullptr;
  }
  return frame_at(self, i);
}

PyObject *tb_subscript(PyObject *self, PyObject *key) {
  if (PyIndex_Check(key)) {
    Py_ssize_t i = PyNumber_AsSsize_t(key, PyExc_IndexError);
    if (i == -1 && PyErr_Occurred()) return nullptr;
    if (i < 0) i += Py_SIZE(self);
    return tb_item(self, i);
  }
  if (!PySlice_Check(key)) {
    PyErr_Format(PyExc_TypeError, "Traceback indices must be integers or slices, not %.200s",
                 Py_TYPE(key)->tp_name);
    return nullptr;
  }
  Py_ssize_t start, stop, step;
  if (PySlice_Unpack(key, &start, &stop, &step) < 0) return nullptr;
  const Py_ssize_t n = PySlice_AdjustIndices(Py_SIZE(self), &start, &stop, step);
  PyObject *result = reinterpret_cast<PyObject *>(take_traceback_storage(n));
  if (!result) return nullptr;
  const RawFrame *src = as_tb(self)->frames;
  RawFrame *dst = as_tb(result)->frames;
  for (Py_ssize_t k = 0, i = start; k < n; ++k, i += step) {
    dst[k] = src[i];
    retain(dst[k]);
  }
  as_tb(result)->may_have_native = as_tb(self)->may_have_native;
  return result;
}

Py_hash_t tb_hash(PyObject *self) {
  TracebackObject *tb = as_tb(self);
  if (tb->hash != -1) return tb->hash;
  // FNV-style mix over both words of every entry (code identity + offset, as JAX hashes).
  std::uint64_t h = 0xcbf29ce484222325ull ^ std::uint64_t(Py_SIZE(tb));
  for (Py_ssize_t i = 0, n = Py_SIZE(tb); i < n; ++i) {
    h = (h ^ tb->frames[i].tagged) * 0x100000001b3ull;
    h = (h ^ std::uint64_t(tb->frames[i].payload)) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  Py_hash_t result = Py_hash_t(h);
  if (result == -1) result = -2;
  return tb->hash = result;
}

bool same_frames(PyObject *a, PyObject *b) {
  const Py_ssize_t n = Py_SIZE(a);
  return n == Py_SIZE(b) &&
         std::memcmp(as_tb(a)->frames, as_tb(b)->frames, size_t(n) * sizeof(RawFrame)) == 0;
}

PyObject *tb_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, traceback_type))
    Py_RETURN_NOTIMPLEMENTED;
  const bool equal = a == b || same_frames(a, b);
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

PyObject *tb_repr(PyObject *self) {
  const Py_ssize_t n = Py_SIZE(self);
  PyObject *parts = PyList_New(0);
  if (!parts) return nullptr;
  PyObject *head = PyUnicode_FromFormat("<callsite.Traceback of %zd frame%s, innermost first%s",
                                        n, n == 1 ? "" : "s", n ? ":" : ">");
  if (!head || PyList_Append(parts, head) < 0) goto fail_head;
  Py_DECREF(head);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *frame = new_frame(as_tb(self)->frames[i]);
    if (!frame) goto fail;
    PyObject *line = PyObject_Str(frame);
    Py_DECREF(frame);
    if (!line) goto fail;
    PyObject *indented = PyUnicode_FromFormat("\n  %U%s", line, i + 1 == n ? ">" : "");
    Py_DECREF(line);
    if (!indented || PyList_Append(parts, indented) < 0) {
      Py_XDECREF(indented);
      goto fail;
    }
    Py_DECREF(indented);
  }
  {
    PyObject *empty = PyUnicode_FromString("");
    PyObject *text = empty ? PyUnicode_Join(empty, parts) : nullptr;
    Py_XDECREF(empty);
    Py_DECREF(parts);
    return text;
  }
fail_head:
  Py_XDECREF(head);
fail:
  Py_DECREF(parts);
  return nullptr;
}

PyObject *tb_frames(PyObject *self, void *) {
  const Py_ssize_t n = Py_SIZE(self);
  PyObject *tuple = PyTuple_New(n);
  if (!tuple) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *frame = frame_at(self, i);
    if (!frame) {
      Py_DECREF(tuple);
      return nullptr;
    }
    PyTuple_SET_ITEM(tuple, i, frame);
  }
  return tuple;
}

// (code, lasti) pairs for Python entries, (executable owner or None, state) for native ones.
PyObject *tb_raw(PyObject *self, PyObject *) {
  const Py_ssize_t n = Py_SIZE(self);
  PyObject *list = PyList_New(n);
  if (!list) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    const RawFrame &f = as_tb(self)->frames[i];
    PyObject *item = f.is_python()
                         ? Py_BuildValue("(On)", static_cast<PyObject *>(f.code()), f.payload)
                         : Py_BuildValue("(sK)", "native", (unsigned long long)f.state());
    if (!item) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, item);
  }
  return list;
}

PyObject *tb_as_stack_summary(PyObject *self, PyObject *) {
  return stack_summary(as_tb(self)->frames, std::size_t(Py_SIZE(self)));
}
PyObject *tb_format(PyObject *self, PyObject *) {
  return format_stack(as_tb(self)->frames, std::size_t(Py_SIZE(self)));
}

PyObject *tb_to_list(PyObject *self, PyObject *) {
  const Py_ssize_t n = Py_SIZE(self);
  PyObject *list = PyList_New(n);
  if (!list) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *frame = new_frame(as_tb(self)->frames[i]);
    PyObject *dict = frame ? frame_to_dict(frame) : nullptr;
    Py_XDECREF(frame);
    if (!dict) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, dict);
  }
  return list;
}

// to_mlir(filter=None): the text of the location MLIR would build for the (kept) frames.
PyObject *tb_to_mlir(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static constexpr const char *kNames[] = {"filter"};
  PyObject *filter = nullptr;
  if (!bind_fastcall_args("to_mlir", kNames, 1, 1, args, nargs, kwnames, &filter))
    return nullptr;
  const RawFrame *frames = as_tb(self)->frames;
  std::size_t n = std::size_t(Py_SIZE(self));
  std::vector<RawFrame> kept;
  if (filter && filter != Py_None) {
    kept.resize(n);
    n = filter_frames(filter, frames, n, kept.data(), SIZE_MAX, as_tb(self)->end);
    if (n == SIZE_MAX) return nullptr;
    frames = kept.data();
  }
  std::string text;
  if (!mlir_location_text(frames, n, &text)) return nullptr;
  return PyUnicode_FromStringAndSize(text.data(), Py_ssize_t(text.size()));
}
PyObject *tb_from_frame(PyObject *, PyObject *frame) { return traceback_from_frame(frame); }

// --- the rest of collections.abc.Sequence: frames compare by (code, offset), unsymbolized ------

PyObject *tb_iter(PyObject *self) { return PySeqIter_New(self); }

PyObject *tb_reversed(PyObject *self, PyObject *) {
  const Py_ssize_t n = Py_SIZE(self);
  PyObject *list = PyList_New(n);
  if (!list) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *frame = frame_at(self, n - 1 - i);
    if (!frame) {
      Py_DECREF(list);
      return nullptr;
    }
    PyList_SET_ITEM(list, i, frame);
  }
  PyObject *it = PyObject_GetIter(list);
  Py_DECREF(list);
  return it;
}

// Index of the first entry in [start, stop) equal to `value`, or -1. Only a callsite.Frame
// can be equal (Frame.__eq__ compares the raw entry).
Py_ssize_t find_entry(PyObject *self, PyObject *value, Py_ssize_t start, Py_ssize_t stop) {
  if (!PyObject_TypeCheck(value, frame_type)) return -1;
  const RawFrame &wanted = frame_raw(value);
  for (Py_ssize_t i = start; i < stop && i < Py_SIZE(self); ++i)
    if (as_tb(self)->frames[i] == wanted) return i;
  return -1;
}

int tb_contains(PyObject *self, PyObject *value) {
  return find_entry(self, value, 0, Py_SIZE(self)) >= 0;
}

PyObject *tb_count(PyObject *self, PyObject *value) {
  Py_ssize_t count = 0;
  for (Py_ssize_t i = find_entry(self, value, 0, Py_SIZE(self)); i >= 0;
       i = find_entry(self, value, i + 1, Py_SIZE(self)))
    ++count;
  return PyLong_FromSsize_t(count);
}

// start/stop as list.index takes them: negative counts from the end, clamped to the length.
bool bound_arg(PyObject *arg, Py_ssize_t n, const char *what, Py_ssize_t *out) {
  if (!PyIndex_Check(arg)) {
    PyErr_Format(PyExc_TypeError, "Traceback.index(): %s must be an int, not %.200s", what,
                 Py_TYPE(arg)->tp_name);
    return false;
  }
  Py_ssize_t v = PyNumber_AsSsize_t(arg, nullptr);  // clamps a huge value
  if (v == -1 && PyErr_Occurred()) return false;
  if (v < 0) v = v + n < 0 ? 0 : v + n;
  *out = v;
  return true;
}

PyObject *tb_index(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs < 1 || nargs > 3) {
    PyErr_Format(PyExc_TypeError, "Traceback.index() takes 1 to 3 arguments (%zd given)", nargs);
    return nullptr;
  }
  const Py_ssize_t n = Py_SIZE(self);
  Py_ssize_t start = 0, stop = n;
  if ((nargs > 1 && !bound_arg(args[1], n, "start", &start)) ||
      (nargs > 2 && !bound_arg(args[2], n, "stop", &stop)))
    return nullptr;
  const Py_ssize_t i = find_entry(self, args[0], start, stop);
  if (i < 0) {
    PyErr_SetString(PyExc_ValueError, "Traceback.index(x): x not in traceback");
    return nullptr;
  }
  return PyLong_FromSsize_t(i);
}
PyObject *tb_from_traceback(PyObject *, PyObject *tb) { return traceback_from_exception_tb(tb); }

// A Traceback is immutable (its frames and size are fixed at construction), so a copy, deep or
// not, is the object itself; copy's fallback would try to pickle it, which it cannot be (its
// entries are code objects and native states, meaningful only in this process).
PyObject *tb_copy(PyObject *self, PyObject *) { return Py_NewRef(self); }
PyObject *tb_deepcopy(PyObject *self, PyObject *) { return Py_NewRef(self); }
PyObject *tb_reduce(PyObject *, PyObject *) {
  PyErr_SetString(PyExc_TypeError,
                  "cannot pickle 'callsite.Traceback' object: its entries are this process's "
                  "code objects and native states (to_list() gives JSON-ready data)");
  return nullptr;
}

PyMethodDef tb_methods[] = {
    {"__copy__", tb_copy, METH_NOARGS, "__copy__($self, /)\n--\n\nThe Traceback itself (immutable)."},
    {"__deepcopy__", tb_deepcopy, METH_O,
     "__deepcopy__($self, memo, /)\n--\n\nThe Traceback itself (immutable)."},
    {"__reduce__", tb_reduce, METH_NOARGS, "__reduce__($self, /)\n--\n\nTypeError: not picklable."},
    {"index", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tb_index)),
     METH_FASTCALL,
     "index($self, value, start=0, stop=sys.maxsize, /)\n--\n\n"
     "The position of the first frame equal to value (same code object and offset)."},
    {"count", tb_count, METH_O,
     "count($self, value, /)\n--\n\nHow many frames are equal to value."},
    {"__reversed__", tb_reversed, METH_NOARGS,
     "__reversed__($self, /)\n--\n\nThe frames, outermost first."},
    {"raw", tb_raw, METH_NOARGS,
     "raw($self, /)\n--\n\n(code, lasti) per Python frame, ('native', state) per native one."},
    {"as_stack_summary", tb_as_stack_summary, METH_NOARGS,
     "as_stack_summary($self, /)\n--\n\noutermost first (lines looked up lazily)."},
    {"format", tb_format, METH_NOARGS,
     "format($self, /)\n--\n\nthe lines traceback.format_list prints, outermost first."},
    {"to_list", tb_to_list, METH_NOARGS,
     "to_list($self, /)\n--\n\none JSON-ready dict per frame, innermost first."},
    {"to_mlir", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tb_to_mlir)),
     METH_FASTCALL | METH_KEYWORDS,
     "to_mlir($self, filter=None)\n--\n\nthe location MLIR's loc_tracebacks() would print."},
    {"from_frame", tb_from_frame, METH_O | METH_CLASS,
     "from_frame($type, frame, /)\n--\n\nframe and its callers (f_back chain), innermost first."},
    {"from_traceback", tb_from_traceback, METH_O | METH_CLASS,
     "from_traceback($type, tb, /)\n--\n\nan exception traceback's entries, innermost first."},
    {nullptr, nullptr, 0, nullptr}};

PyGetSetDef tb_getset[] = {
    {"frames", tb_frames, nullptr, "tuple[Frame, ...]: every frame, symbolized.", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot tb_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "A captured call stack: raw (code, instruction offset) frames, innermost "
                    "first, symbolized on access. Hashable; equal when the same code objects "
                    "and offsets.\n\n"
                    R"doc(Raises:
    TypeError: instantiated directly (make one with :func:`callsite.capture`,
        :meth:`from_frame` or :meth:`from_traceback`), as in ``callsite.Traceback()``.
    IndexError: an index past the end, as in ``callsite.capture()[10**6]``.
    TypeError: ``from_frame`` given something else than a frame, as in
        ``callsite.Traceback.from_frame(3)``.

Example:
    ::

        import sys
        import callsite

        tb = callsite.capture()
        assert tb == callsite.Traceback.from_frame(sys._getframe()) or True  # same stack, other line
        print(tb.raw()[0][0].co_name)           # the code object of the innermost frame
        print(tb.as_stack_summary()[-1].lineno) # a traceback.StackSummary, outermost first
        print(tb.to_mlir())                     # the MLIR location text
        try:
            1 / 0
        except ZeroDivisionError as e:
            print(callsite.Traceback.from_traceback(e.__traceback__)[0].lineno)
)doc")},
    {Py_tp_dealloc, reinterpret_cast<void *>(traceback_dealloc)},
    {Py_tp_hash, reinterpret_cast<void *>(tb_hash)},
    {Py_tp_richcompare, reinterpret_cast<void *>(tb_richcompare)},
    {Py_tp_repr, reinterpret_cast<void *>(tb_repr)},
    {Py_sq_length, reinterpret_cast<void *>(tb_length)},
    {Py_sq_item, reinterpret_cast<void *>(tb_item)},
    {Py_sq_contains, reinterpret_cast<void *>(tb_contains)},
    {Py_tp_iter, reinterpret_cast<void *>(tb_iter)},
    {Py_mp_length, reinterpret_cast<void *>(tb_length)},
    {Py_mp_subscript, reinterpret_cast<void *>(tb_subscript)},
    {Py_tp_methods, tb_methods},
    {Py_tp_getset, tb_getset},
    {0, nullptr}};

PyType_Spec tb_spec = {"callsite.Traceback", int(offsetof(TracebackObject, frames)),
                       int(sizeof(RawFrame)),
                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, tb_slots};

}  // namespace

PyTypeObject *init_traceback_type() noexcept {
  if (!traceback_type) traceback_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&tb_spec));
  return traceback_type;
}

}  // namespace callsite::detail
