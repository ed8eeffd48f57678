// python/frame_type.cc — callsite.Frame: a symbolized frame with FrameSummary's field names.
#include "python/frame_type.h"

#include <structmember.h>

#include <string>

#include "core/frame_refs.h"
#include "native/frame_locals.h"
#include "render/mlir_text.h"
#include "symbolize/symbolize.h"

namespace callsite::detail {

PyTypeObject *frame_type = nullptr;

namespace {

struct FrameObject {
  PyObject_HEAD
  RawFrame raw;
  PyObject *filename, *name, *qualname, *code;  // strong references (code: None if absent)
  int lineno, end_lineno, colno, end_colno;     // -1 = None
  std::size_t activation;  // see new_frame
};

inline FrameObject *as_frame(PyObject *o) { return reinterpret_cast<FrameObject *>(o); }

inline PyObject *int_or_none(int v) {
  if (v < 0) Py_RETURN_NONE;
  return PyLong_FromLong(v);
}

void frame_dealloc(PyObject *self) {
  FrameObject *f = as_frame(self);
  Py_XDECREF(f->filename);
  Py_XDECREF(f->name);
  Py_XDECREF(f->qualname);
  Py_XDECREF(f->code);
  release(f->raw);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

#define CALLSITE_INT_GETTER(field) \
  PyObject *get_##field(PyObject *self, void *) { return int_or_none(as_frame(self)->field); }
CALLSITE_INT_GETTER(lineno)
CALLSITE_INT_GETTER(end_lineno)
CALLSITE_INT_GETTER(colno)
CALLSITE_INT_GETTER(end_colno)
#undef CALLSITE_INT_GETTER

PyObject *get_kind(PyObject *self, void *) {
  return PyUnicode_FromString(as_frame(self)->raw.is_python() ? "python" : "native");
}
PyObject *get_lasti(PyObject *self, void *) {
  const RawFrame &raw = as_frame(self)->raw;
  if (!raw.is_python()) Py_RETURN_NONE;
  return PyLong_FromLong(raw.lasti());
}
PyObject *get_state(PyObject *self, void *) {
  const RawFrame &raw = as_frame(self)->raw;
  if (raw.is_python()) Py_RETURN_NONE;
  return PyLong_FromUnsignedLongLong(raw.state());
}

// A native entry's variables through its locals reifier (the live frame it stands for, when
// that frame has its own, else its executable's), read now (None: a Python entry, or no
// reifier).
PyObject *get_locals(PyObject *self, void *) {
  const RawFrame &raw = as_frame(self)->raw;
  if (raw.is_python()) Py_RETURN_NONE;
  const NativeLink *link =
      native::live_link(raw.executable(), raw.state(), as_frame(self)->activation);
  if (!native::has_locals(raw.executable(), link)) Py_RETURN_NONE;
  return native::read_locals(raw.executable(), raw.state(), link);
}

// "file.py:12:4 in qualname" (the column part only where CPython has one; 1-based like
// tracebacks print lines, columns as co_positions() gives them).
PyObject *frame_str(PyObject *self) {
  FrameObject *f = as_frame(self);
  PyObject *line = int_or_none(f->lineno);
  if (!line) return nullptr;
  PyObject *text =
      f->colno >= 0
          ? PyUnicode_FromFormat("File \"%U\", line %S, col %d, in %U", f->filename, line,
                                 f->colno, f->qualname)
          : PyUnicode_FromFormat("File \"%U\", line %S, in %U", f->filename, line, f->qualname);
  Py_DECREF(line);
  return text;
}

PyObject *frame_repr(PyObject *self) {
  FrameObject *f = as_frame(self);
  PyObject *l = int_or_none(f->lineno), *el = int_or_none(f->end_lineno);
  PyObject *c = int_or_none(f->colno), *ec = int_or_none(f->end_colno);
  PyObject *text = nullptr;
  if (l && el && c && ec)
    text = PyUnicode_FromFormat(
        "<callsite.Frame %s %R in %R, lineno=%S, end_lineno=%S, colno=%S, end_colno=%S>",
        f->raw.is_python() ? "python" : "native", f->filename, f->qualname, l, el, c, ec);
  Py_XDECREF(l);
  Py_XDECREF(el);
  Py_XDECREF(c);
  Py_XDECREF(ec);
  return text;
}

Py_hash_t frame_hash(PyObject *self) {
  const RawFrame &raw = as_frame(self)->raw;
  Py_hash_t h = Py_hash_t((raw.tagged >> 4) * 1000003u ^ std::uintptr_t(raw.payload));
  return h == -1 ? -2 : h;
}

// Two Frames are equal when they stand for the same code object and instruction offset (or
// the same executable and state): everything else is derived from that.
PyObject *frame_richcompare(PyObject *a, PyObject *b, int op) {
  if ((op != Py_EQ && op != Py_NE) || !PyObject_TypeCheck(b, frame_type))
    Py_RETURN_NOTIMPLEMENTED;
  const bool equal = as_frame(a)->raw == as_frame(b)->raw;
  return PyBool_FromLong(op == Py_EQ ? equal : !equal);
}

PyObject *frame_to_mlir_method(PyObject *self, PyObject *) {
  FrameInfo info;
  if (!symbolize(as_frame(self)->raw, &info)) return nullptr;
  std::string text;
  if (!append_mlir_frame(text, info)) return nullptr;
  return PyUnicode_FromStringAndSize(text.data(), Py_ssize_t(text.size()));
}
PyObject *frame_to_dict_method(PyObject *self, PyObject *) { return frame_to_dict(self); }
// Immutable (every field is read-only and derived from the raw entry): a copy is the Frame.
PyObject *frame_copy(PyObject *self, PyObject *) { return Py_NewRef(self); }
PyObject *frame_deepcopy(PyObject *self, PyObject *) { return Py_NewRef(self); }
PyObject *frame_reduce(PyObject *, PyObject *) {
  PyErr_SetString(PyExc_TypeError,
                  "cannot pickle 'callsite.Frame' object: it stands for this process's code "
                  "object or native state (to_dict() gives JSON-ready data)");
  return nullptr;
}

PyMemberDef frame_members[] = {
    {"filename", T_OBJECT, offsetof(FrameObject, filename), READONLY, "str: co_filename"},
    {"name", T_OBJECT, offsetof(FrameObject, name), READONLY, "str: co_name"},
    {"qualname", T_OBJECT, offsetof(FrameObject, qualname), READONLY,
     "str: co_qualname (co_name on 3.10)"},
    {"code", T_OBJECT, offsetof(FrameObject, code), READONLY,
     "the code object (for native frames: the reified one, or None)"},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef frame_getset[] = {
    {"lineno", get_lineno, nullptr, "int | None: line, as frame.f_lineno", nullptr},
    {"end_lineno", get_end_lineno, nullptr, "int | None: last line of the instruction", nullptr},
    {"colno", get_colno, nullptr, "int | None: 0-based start column (co_positions)", nullptr},
    {"end_colno", get_end_colno, nullptr, "int | None: 0-based end column, exclusive", nullptr},
    {"kind", get_kind, nullptr, "'python' or 'native'", nullptr},
    {"lasti", get_lasti, nullptr, "int | None: instruction offset in bytes (Python frames)",
     nullptr},
    {"state", get_state, nullptr, "int | None: the native frame's state", nullptr},
    {"locals", get_locals, nullptr,
     "dict | None: a native frame's variables, from its executable's locals reifier, read "
     "when this attribute is (None: a Python frame, or no locals reifier)",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef frame_methods[] = {
    {"to_mlir", frame_to_mlir_method, METH_NOARGS,
     "to_mlir($self, /)\n--\n\nthis frame as MLIR prints it: \"qualname\"(\"file\":l:c to :ec)."},
    {"to_dict", frame_to_dict_method, METH_NOARGS, "to_dict($self, /)\n--\n\nJSON-ready fields."},
    {"__copy__", frame_copy, METH_NOARGS, "__copy__($self, /)\n--\n\nThe Frame itself (immutable)."},
    {"__deepcopy__", frame_deepcopy, METH_O,
     "__deepcopy__($self, memo, /)\n--\n\nThe Frame itself (immutable)."},
    {"__reduce__", frame_reduce, METH_NOARGS, "__reduce__($self, /)\n--\n\nTypeError: not picklable."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot frame_slots[] = {
    {Py_tp_doc, const_cast<char *>("One symbolized frame of a callsite.Traceback.\n\n"
                                   R"doc(Raises:
    TypeError: instantiated directly (frames come from a Traceback), as in
        ``callsite.Frame()``.

Example:
    ::

        import callsite

        frame = callsite.capture()[0]
        print(frame.filename, frame.lineno, frame.colno, frame.end_colno, frame.kind)
        print(frame.to_dict()["qualname"])       # '<module>'
)doc")},
    {Py_tp_dealloc, reinterpret_cast<void *>(frame_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(frame_repr)},
    {Py_tp_str, reinterpret_cast<void *>(frame_str)},
    {Py_tp_hash, reinterpret_cast<void *>(frame_hash)},
    {Py_tp_richcompare, reinterpret_cast<void *>(frame_richcompare)},
    {Py_tp_members, frame_members},
    {Py_tp_getset, frame_getset},
    {Py_tp_methods, frame_methods},
    {0, nullptr}};

PyType_Spec frame_spec = {"callsite.Frame", int(sizeof(FrameObject)), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, frame_slots};

}  // namespace

PyTypeObject *init_frame_type() noexcept {
  frame_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&frame_spec));
  return frame_type;
}

PyObject *new_frame(const RawFrame &raw, std::size_t activation) {
  FrameInfo info;
  if (!symbolize(raw, &info)) return nullptr;
  FrameObject *f = PyObject_New(FrameObject, frame_type);
  if (!f) return nullptr;
  f->raw = raw;
  f->activation = activation;
  retain(raw);
  f->filename = Py_NewRef(info.filename ? info.filename : Py_None);
  f->name = Py_NewRef(info.name ? info.name : Py_None);
  f->qualname = Py_NewRef(info.qualname ? info.qualname : Py_None);
  f->code = Py_NewRef(info.code ? info.code : Py_None);
  f->lineno = info.lineno;
  f->end_lineno = info.end_lineno;
  f->colno = info.colno;
  f->end_colno = info.end_colno;
  return reinterpret_cast<PyObject *>(f);
}

const RawFrame &frame_raw(PyObject *obj) noexcept { return as_frame(obj)->raw; }

PyObject *frame_to_dict(PyObject *frame) noexcept {
  static const char *const kFields[] = {"kind",   "filename",   "name",  "qualname", "lineno",
                                        "end_lineno", "colno", "end_colno", "lasti", "state"};
  PyObject *dict = PyDict_New();
  if (!dict) return nullptr;
  for (const char *field : kFields) {
    PyObject *value = PyObject_GetAttrString(frame, field);
    if (!value || PyDict_SetItemString(dict, field, value) < 0) {
      Py_XDECREF(value);
      Py_DECREF(dict);
      return nullptr;
    }
    Py_DECREF(value);
  }
  return dict;
}

}  // namespace callsite::detail
