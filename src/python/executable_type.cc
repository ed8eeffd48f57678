// python/executable_type.cc — callsite.native.Executable(name, reifier, *, kind="python"):
// the Python type of an executable whose reifier is a Python callable (or, made through the C
// API, a C++ one).
#include "python/executable_type.h"

#include <structmember.h>

#include "core/frame_refs.h"
#include "native/executable.h"
#include "native/frame_locals.h"
#include "native/guest_module.h"
#include "native/reify.h"
#include "native/visible_code.h"
#include "native/visible_frames.h"
#include "python/frame_type.h"
#include "python/native_frame_type.h"

namespace callsite::native {

namespace {

inline ExecutableObject *as_exe(PyObject *o) { return reinterpret_cast<ExecutableObject *>(o); }

// The reifier a new Executable shows: `reifier`, or for locations=[...] the __getitem__ of
// their tuple (*table: the tuple, which reify.cc indexes itself), with the table's size in
// *table_size (-1 without locations). New references, or nullptr with an error.
PyObject *reifier_of(PyObject *reifier, PyObject *locations, Py_ssize_t *table_size,
                     PyObject **table_out) {
  *table_size = -1;
  *table_out = nullptr;
  if (!locations || locations == Py_None) {
    if (reifier != Py_None) return Py_NewRef(reifier);
    PyErr_SetString(PyExc_TypeError,
                    "Executable needs a reifier (state: int) -> Location, or locations=[...]");
    return nullptr;
  }
  if (!PyList_Check(locations) && !PyTuple_Check(locations)) {
    PyErr_Format(PyExc_TypeError,
                 "Executable locations must be a list of callsite.native.Location (state k "
                 "-> locations[k]), not %.200s", Py_TYPE(locations)->tp_name);
    return nullptr;
  }
  if (reifier != Py_None) {
    PyErr_SetString(PyExc_TypeError, "Executable takes a reifier or locations=[...], not both");
    return nullptr;
  }
  PyObject *table = PySequence_Tuple(locations);
  if (!table) return nullptr;
  const Py_ssize_t n = PyTuple_GET_SIZE(table);
  if (std::size_t(n) > kMaxVisibleStates) {
    PyErr_Format(PyExc_ValueError,
                 "Executable locations must have at most %zu items (the synthetic code is "
                 "built eagerly), got %zd", kMaxVisibleStates, n);
    Py_DECREF(table);
    return nullptr;
  }
  PyObject *getitem = PyObject_GetAttrString(table, "__getitem__");
  if (!getitem) {
    Py_DECREF(table);
    return nullptr;
  }
  *table_size = n;
  *table_out = table;
  return getitem;
}

// states=: the number of states the synthetic code maps, -1 when not given. False + error.
bool parse_states(PyObject *states, Py_ssize_t *count) {
  *count = -1;
  if (!states || states == Py_None) return true;
  if (!PyLong_Check(states) || PyBool_Check(states)) {
    PyErr_Format(PyExc_TypeError, "Executable states must be an int, not %.200s",
                 Py_TYPE(states)->tp_name);
    return false;
  }
  const Py_ssize_t n = PyLong_AsSsize_t(states);
  if (n == -1 && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_OverflowError))
    return false;
  if (n < 0 || std::size_t(n) > kMaxVisibleStates) {  // an overflow included
    PyErr_Clear();
    PyErr_Format(PyExc_ValueError,
                 "Executable states must be in [0, %zu] (the synthetic code is built "
                 "eagerly), got %S", kMaxVisibleStates, states);
    return false;
  }
  *count = n;
  return true;
}

// How many states a visible executable's code maps (-1: not visible): states= if given,
// else the locations' count, else one. The visible= flag decides. False + error.
bool visible_states_of(PyObject *visible, Py_ssize_t table_size, Py_ssize_t states,
                       Py_ssize_t *count) {
  const int on = visible ? PyObject_IsTrue(visible) : 0;
  if (on < 0) return false;
  const Py_ssize_t given = states >= 0 ? states : table_size;
  *count = !on ? -1 : given >= 0 ? given : 1;
  return true;
}

// An optional keyword argument: None reads as absent (*value becomes nullptr); otherwise
// `accepted` says whether it is what Executable expects, else a TypeError naming it.
bool optional_argument(PyObject **value, bool accepted, const char *name, const char *expected) {
  if (*value == Py_None) *value = nullptr;
  if (!*value || accepted) return true;
  PyErr_Format(PyExc_TypeError, "Executable %s must be %s, or None, not %.200s", name, expected,
               Py_TYPE(*value)->tp_name);
  return false;
}

PyObject *exe_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"name",   "reifier", "kind",   "visible", "locations",
                                 "states", "locals",  "source", nullptr};
  PyObject *name, *reifier = Py_None, *kind = nullptr, *visible = nullptr,
                  *locations = nullptr, *states = nullptr, *locals = nullptr, *source = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O$OOOOOO:Executable",
                                   const_cast<char **>(kwlist), &name, &reifier, &kind,
                                   &visible, &locations, &states, &locals, &source))
    return nullptr;
  if (!PyUnicode_Check(name))
    return PyErr_Format(PyExc_TypeError, "Executable name must be a str, not %.200s",
                        Py_TYPE(name)->tp_name);
  Py_ssize_t table_size, state_count, visible_states;
  PyObject *table;
  reifier = reifier_of(reifier, locations, &table_size, &table);
  if (!reifier) return nullptr;
  PyObject *owned_reifier = reifier;  // new references from here on
  struct Drop {
    PyObject *&ref;
    ~Drop() { Py_XDECREF(ref); }
  } drop{owned_reifier}, drop_table{table};
  if (!parse_states(states, &state_count) ||
      !visible_states_of(visible, table_size, state_count, &visible_states))
    return nullptr;
  if (!PyCallable_Check(reifier))
    return PyErr_Format(PyExc_TypeError,
                        "Executable reifier must be callable (state: int) -> Location, not "
                        "%.200s", Py_TYPE(reifier)->tp_name);
  if (!optional_argument(&locals, PyCallable_Check(locals ? locals : Py_None), "locals",
                         "callable (state: int) -> mapping of variable names to values") ||
      !optional_argument(&source, source && PyUnicode_Check(source), "source",
                         "a str (the text of the guest file its locations name)"))
    return nullptr;
  if (kind && !PyUnicode_Check(kind))
    return PyErr_Format(PyExc_TypeError, "Executable kind must be a str, not %.200s",
                        Py_TYPE(kind)->tp_name);
  PyObject *default_kind = kind ? nullptr : PyUnicode_FromString("python");
  if (!kind && !(kind = default_kind)) return nullptr;
  ExecutableObject *self = allocate_executable(type, name, kind);
  Py_XDECREF(default_kind);
  if (!self) return nullptr;
  self->reifier = Py_NewRef(reifier);
  self->locations = Py_XNewRef(table);
  self->locals = Py_XNewRef(locals);
  if (locals) any_locals = true;
  self->exe.reify = &python_reifier;
  self->visible_states = visible_states;
  // An exact str: its compare and hash in the guest module's cache run no Python.
  self->source = source ? PyUnicode_FromObject(source) : nullptr;
  if (source && !self->source) {
    Py_DECREF(self);
    return nullptr;
  }
  // locations=[...] are known now: build the code eagerly, so errors surface here. Where
  // visible frames are unavailable: one RuntimeWarning now, then shadow-only frames.
  if (visible_states >= 0 && ((locations && locations != Py_None) || visible_refusal()) &&
      !visible_code_of(self) && PyErr_Occurred()) {
    Py_DECREF(self);
    return nullptr;
  }
  return reinterpret_cast<PyObject *>(self);
}

int exe_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(as_exe(self)->reifier);
  Py_VISIT(as_exe(self)->locations);
  Py_VISIT(as_exe(self)->locals);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int exe_clear(PyObject *self) {
  Py_CLEAR(as_exe(self)->reifier);  // later reifications give a placeholder
  Py_CLEAR(as_exe(self)->locations);
  Py_CLEAR(as_exe(self)->locals);  // later reads show no variables
  return 0;
}

void exe_dealloc(PyObject *self) {
  ExecutableObject *e = as_exe(self);
  PyObject_GC_UnTrack(self);
  if (e->weakrefs) PyObject_ClearWeakRefs(self);
  forget_visible(&e->exe);  // after the last frame: retained frame objects own the code
  forget(&e->exe);  // nothing can hold a frame of it any more: its cache goes
  forget_locals(&e->exe);
  release_guest_source(&e->exe);
  Py_CLEAR(e->source);
  Py_CLEAR(e->source_file);
  if (e->free_user_data) e->free_user_data(e->exe.user_data);
  Py_CLEAR(e->reifier);
  Py_CLEAR(e->locations);
  Py_CLEAR(e->locals);
  Py_CLEAR(e->name);
  Py_CLEAR(e->kind);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject *exe_repr(PyObject *self) {
  return PyUnicode_FromFormat("<callsite.native.Executable %R kind=%R>", as_exe(self)->name,
                              as_exe(self)->kind);
}

PyObject *exe_frame(PyObject *self, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"state", nullptr};
  PyObject *state_obj = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:frame", const_cast<char **>(kwlist),
                                   &state_obj))
    return nullptr;
  std::uintptr_t state = 0;
  if (state_obj && !parse_state(state_obj, &state)) return nullptr;
  return new_native_frame(as_exe(self), state);
}

// Symbolizes (self, state) through the cache, as a capture's frame would be.
PyObject *exe_reify(PyObject *self, PyObject *state_obj) {
  std::uintptr_t state = 0;
  if (!parse_state(state_obj, &state)) return nullptr;
  return detail::new_frame(detail::native_raw_frame(&as_exe(self)->exe, state));
}

PyMemberDef exe_members[] = {
    {"name", T_OBJECT, offsetof(ExecutableObject, name), READONLY, "str"},
    {"kind", T_OBJECT, offsetof(ExecutableObject, kind), READONLY, "str"},
    {"reifier", T_OBJECT, offsetof(ExecutableObject, reifier), READONLY,
     "the Python reifier, or None (a C++ reifier)"},
    {"locals", T_OBJECT, offsetof(ExecutableObject, locals), READONLY,
     "the Python locals reifier, called with a state and returning a mapping of names to "
     "values, or None"},
    {"source", T_OBJECT, offsetof(ExecutableObject, source), READONLY,
     "the text of the guest file its locations name (source=), or None"},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(ExecutableObject, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyMethodDef exe_methods[] = {
    {"frame", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(exe_frame)),
     METH_VARARGS | METH_KEYWORDS,
     "frame($self, state=0)\n--\n\na frame of this executable, pushed by `with` (or used "
     "as a decorator: one fresh frame per call)."},
    {"reify", exe_reify, METH_O,
     "reify($self, state, /)\n--\n\nthe location of `state`, through the reifier and cache."},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot exe_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "Executable(name, reifier=None, *, kind='python', visible=False, "
                    "locations=None, states=None, locals=None, source=None)\n--\n\n"
                    "One kind of native code (an interpreted function, a JIT kernel). "
                    "reifier(state: int) returns a callsite.native.Location (or a "
                    "(filename, lineno, ...) tuple, or None) and is called only when a frame "
                    "of this executable is symbolized; results are cached per state. "
                    "locations=[Location, ...] replaces the reifier (state k -> locations[k]). "
                    "visible=True: frames pushed around a call made from C (the decorator "
                    "form) are also real interpreter frames, whose synthetic code maps "
                    "len(locations) states, or `states` states reified on the first push. "
                    "locals(state: int) returns a mapping of variable names to values, called "
                    "only when something reads a frame's variables (frame.f_locals of a "
                    "visible frame, a traceback's frame, callsite.Frame.locals). "
                    "source: the text of the guest file the locations name, held in memory: "
                    "tracebacks, linecache and debuggers show its lines without a file on "
                    "disk.\n\n"
                    R"doc(Raises:
    TypeError: ``name`` or ``kind`` is not a str, as in ``native.Executable(3)``.
    TypeError: neither a callable ``reifier`` nor ``locations`` is given, as in
        ``native.Executable("k")``.
    ValueError: ``states`` is out of range, as in ``native.Executable("k", lambda s:
        None, states=-1)``.
    OverflowError: ``reify`` given a negative state, as in ``exe.reify(-1)``.
    TypeError: ``locals`` is not callable, as in ``native.Executable("k", lambda s:
        None, locals=3)``.
    TypeError: ``source`` is not a str, as in ``native.Executable("k", lambda s: None,
        source=b"x")``.

Example:
    ::

        from callsite import native

        lines = [3, 4, 7]
        exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", lines[pc]))
        print(exe.reify(2).lineno)                           # 7, cached per state
)doc")},
    {Py_tp_new, reinterpret_cast<void *>(exe_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(exe_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(exe_traverse)},
    {Py_tp_clear, reinterpret_cast<void *>(exe_clear)},
    {Py_tp_repr, reinterpret_cast<void *>(exe_repr)},
    {Py_tp_members, exe_members},
    {Py_tp_methods, exe_methods},
    {0, nullptr}};

PyType_Spec exe_spec = {"callsite.native.Executable", int(sizeof(ExecutableObject)), 0,
                        Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, exe_slots};

}  // namespace

PyTypeObject *init_executable_type() noexcept {
  if (!init_frame_locals_type()) return nullptr;
  if (!executable_type)
    executable_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&exe_spec));
  return executable_type;
}

}  // namespace callsite::native
