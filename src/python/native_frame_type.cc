// python/native_frame_type.cc — callsite.native.NativeFrame: the shadow-stack machinery
// driven from Python (`with exe.frame() as f: f.state = pc`), and its decorator form.
#include "python/native_frame_type.h"

#include <structmember.h>

#include <cstring>
#include <exception>
#include <vector>

#include "core/compat.h"
#include "core/pointer_set.h"
#include "native/exception_entry.h"
#include "native/frame_locals.h"
#include "native/greenlets.h"
#include "native/shadow_stack.h"
#include "native/visible_frames.h"

namespace callsite::native {

PyTypeObject *native_frame_type = nullptr;
PyTypeObject *framed_function_type = nullptr;

void init_framed(PyObject *wrapper, PyObject *fn, struct PyNativeFrame *frame);

namespace {

// The links of NativeFrame objects that are pushed: how current() tells a Python-pushed
// frame from a C++ one on the same stack. A flat table: the decorator inserts and erases
// once per call. GIL-protected, never destroyed.
auto &python_links = *new PointerSet();

// NativeFrame objects kept after their last reference went, for the next new_native_frame:
// the decorator makes one per call, and a GC object's allocation and release go through the
// allocator and the collector's bookkeeping each time. GIL-protected, as python_links.
constexpr int kSpareFrames = 32;
PyNativeFrame *spare_frames[kSpareFrames];
// Per spare: true when it kept its object header (one reference, its type held): put back by
// a decorator call, not by the deallocator.
bool spare_live[kSpareFrames];
int spare_count = 0;

inline PyNativeFrame *as_nf(PyObject *o) { return reinterpret_cast<PyNativeFrame *>(o); }
inline PyObject *as_obj(PyNativeFrame *f) { return reinterpret_cast<PyObject *>(f); }
inline bool active(const PyNativeFrame *f) { return f->stack || (f->special & kParked); }

PyNativeFrame *from_link(const NativeLink *link) {
  return reinterpret_cast<PyNativeFrame *>(reinterpret_cast<char *>(const_cast<NativeLink *>(link)) -
                                           offsetof(PyNativeFrame, link));
}

// Pushes `f`. A frame pushed from a generator or coroutine frame may stay active across a
// yield, so it is parked under that frame's marker instead of going on the thread's stack
// (see shadow_stack.h). `nested`: the caller pops it before returning (the decorator), so it
// can never outlive the activation and goes on the stack even from a generator.
// A visible executable's frame pushed by `with` or push() cannot be an interpreter frame
// (one is linked only around a call made from C, strictly LIFO with the interpreter's own):
// say so once per executable, naming the form that is. False if the warning became an error.
[[gnu::noinline]] bool warn_shadow_push(ExecutableObject *exe) {
  exe->warned_shadow_push = true;
  return PyErr_WarnFormat(PyExc_RuntimeWarning, 1,  // the `with` line: no frame of ours
                          "callsite.native: executable %R has visible=True, but a frame "
                          "pushed by `with` or push() stays on callsite's shadow stack only; "
                          "the decorator form, native.frame(exe, state)(function)(...), makes "
                          "the frame a real interpreter frame around that call (reported once "
                          "per executable)",
                          exe->name) == 0;
}

bool pop_frame(PyNativeFrame *f, bool strict);
PyObject *own_locals(const Executable *, std::uintptr_t state, void *context);

// A frame given `locals` before its push (a loop interpreter's activation record makes its
// frame before the loop pushes it): they become its own reifier now, for this activation.
// False + MemoryError, the frame popped again.
[[gnu::noinline]] bool register_own_locals(PyNativeFrame *f) {
  if (register_frame_locals(&f->link, nullptr, &own_locals, f, true) < 0) {
    pop_frame(f, false);
    PyErr_NoMemory();
    return false;
  }
  f->special |= kOwnLocals;
  return true;
}

bool push_frame(PyNativeFrame *f, bool nested) {
  if (active(f)) {
    PyErr_Format(PyExc_RuntimeError, "native frame of %R is already active",
                 f->executable->name);
    return false;
  }
  // Before anything is pushed: the warning may run any code (a showwarning hook).
  if (!nested && f->executable->visible_states >= 0 && !f->executable->warned_shadow_push) {
    if (!warn_shadow_push(f->executable)) return false;
    if (active(f)) {  // the hook pushed this very frame
      PyErr_Format(PyExc_RuntimeError, "native frame of %R is already active",
                   f->executable->name);
      return false;
    }
  }
  try {
    python_links.insert(&f->link);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    PyErr_NoMemory();
    return false;
  }
  const Executable *exe = &f->executable->exe;
  if (!track_greenlets()) {
    python_links.erase(&f->link);
    return false;
  }
  if (!nested && in_suspendable_frame()) {
    f->link = NativeLink{nullptr, current_marker(), exe, f->link.state};
    if (!park(&f->link)) {
      python_links.erase(&f->link);
      return false;
    }
    f->special |= kParked;
  } else {
    f->stack = push(&f->link, exe, f->link.state);
  }
  Py_INCREF(as_obj(f));  // the stack points into us: stay alive while active
  if (f->locals) [[unlikely]]
    return register_own_locals(f);
  return true;
}

// Pops `f`, whose `locals` are registered: they are forgotten once it is popped (a visible
// frame's were frozen by then, when something outlives it). Their release may run any code:
// last.
[[gnu::noinline]] bool pop_with_own_locals(PyNativeFrame *f, bool strict) {
  Py_INCREF(as_obj(f));
  f->special &= std::uint8_t(~kOwnLocals);
  const bool popped = pop_frame(f, strict);
  PyObject *locals = nullptr;
  if (active(f)) {  // not popped (pushed on another thread: refused): it keeps them
    f->special |= kOwnLocals;
  } else {
    set_frame_locals(&f->link, nullptr, nullptr, nullptr);
    locals = f->locals;
    f->locals = nullptr;
  }
  Py_XDECREF(locals);
  Py_DECREF(as_obj(f));
  return popped;
}

// Pops `f`. Out of order (a frame pushed later is still active): it is unlinked anyway and,
// when `strict`, RuntimeError says so.
bool pop_frame(PyNativeFrame *f, bool strict) {
  if (f->special) [[unlikely]] {
    if (f->special & kOwnLocals) return pop_with_own_locals(f, strict);
    unpark(&f->link);
    f->special = 0;
  } else if (!f->stack) {
    PyErr_Format(PyExc_RuntimeError, "native frame of %R is not active", f->executable->name);
    return false;
  } else if (f->stack != this_thread()) {
    PyErr_Format(PyExc_RuntimeError,
                 "native frame of %R was pushed on another thread; it must be popped there",
                 f->executable->name);
    return false;
  } else if (f->stack->head == &f->link) {
    f->stack->head = const_cast<NativeLink *>(f->link.previous);
    f->stack = nullptr;
  } else {
    const NativeLink *head = f->stack->head;
    PyObject *inner = head && head->executable && head->executable->name
                          ? PyUnicode_FromString(head->executable->name)
                          : nullptr;
    unlink(f->stack, &f->link);
    f->stack = nullptr;
    python_links.erase(&f->link);
    if (strict)
      PyErr_Format(PyExc_RuntimeError,
                   "native frame of %R popped out of order: a frame of %R pushed after it is "
                   "still active (it was unlinked anyway)",
                   f->executable->name, inner ? inner : Py_None);
    Py_XDECREF(inner);
    Py_DECREF(as_obj(f));
    return !strict;
  }
  python_links.erase(&f->link);
  Py_DECREF(as_obj(f));
  return true;
}

PyObject *nf_new(PyTypeObject *, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"executable", "state", nullptr};
  PyObject *exe, *state_obj = nullptr;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:NativeFrame", const_cast<char **>(kwlist),
                                   &exe, &state_obj))
    return nullptr;
  if (!PyObject_TypeCheck(exe, executable_type))
    return PyErr_Format(PyExc_TypeError,
                        "NativeFrame executable must be a callsite.native.Executable, not %.200s",
                        Py_TYPE(exe)->tp_name);
  std::uintptr_t state = 0;
  if (state_obj && !parse_state(state_obj, &state)) return nullptr;
  return new_native_frame(reinterpret_cast<ExecutableObject *>(exe), state);
}

int nf_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(as_nf(self)->executable);
  Py_VISIT(as_nf(self)->locals);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

void nf_dealloc(PyObject *self) {
  PyNativeFrame *f = as_nf(self);
  PyObject_GC_UnTrack(self);
  if (f->weakrefs) PyObject_ClearWeakRefs(self);
  // Never active here (an active frame holds a reference to itself): only locals given
  // before a push that never came are left.
  Py_CLEAR(f->locals);
  Py_CLEAR(f->executable);
  PyTypeObject *type = Py_TYPE(self);
  // Untracked and holding nothing: new_native_frame re-initialises it (PyObject_Init).
  if (type == native_frame_type && spare_count < kSpareFrames) {
    spare_live[spare_count] = false;
    spare_frames[spare_count++] = f;
  } else {
    type->tp_free(self);
  }
  Py_DECREF(type);
}

PyObject *nf_push(PyObject *self, PyObject *) {
  if (!push_frame(as_nf(self), false)) return nullptr;
  Py_RETURN_NONE;
}

// True when `exc` is an exception that should get this frame's traceback entry: an
// exception instance other than GeneratorExit (control flow, not an error).
bool annotates(PyObject *exc) {
  return exc != Py_None && PyExceptionInstance_Check(exc) &&
         !PyErr_GivenExceptionMatches(exc, PyExc_GeneratorExit);
}

// Pops `f` after its entry went into a passing exception's traceback: false + error when the
// pop failed, or when the frame's locals reifier raised an interrupt meanwhile (`interrupt`,
// owned; raised instead of the passing exception, which is its __context__).
bool finish_pop(PyNativeFrame *f, PyObject *interrupt) {
  if (!pop_frame(f, true)) {
    Py_XDECREF(interrupt);
    return false;
  }
  if (!interrupt) return true;
  compat::restore_raised_exception(interrupt);
  return false;
}

// pop(exc=None). With an exception passing through the frame (a loop interpreter unwinding
// its guest frames, which are no Python calls and so have no `with` around them), the
// frame's entry goes into that exception's traceback first, placed as __exit__ places it.
PyObject *nf_pop(PyObject *self, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  static const char *const names[] = {"exc"};
  PyObject *exc = Py_None;
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  if (nargs + nkw > 1 ||
      (nkw == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), names[0]))) {
    PyErr_SetString(PyExc_TypeError, "pop() takes one optional argument, exc");
    return nullptr;
  }
  if (nargs + nkw == 1) exc = args[0];
  if (exc != Py_None && !PyExceptionInstance_Check(exc))
    return PyErr_Format(PyExc_TypeError,
                        "pop() exc must be an exception instance or None, not %.200s",
                        Py_TYPE(exc)->tp_name);
  PyNativeFrame *f = as_nf(self);
  PyObject *interrupt = nullptr;
  if (annotates(exc) && active(f)) {
    PyObject *tb = PyException_GetTraceback(exc);  // new reference or nullptr
    interrupt = insert_traceback(exc, tb, f->link.marker, &f->executable->exe, f->link.state,
                                 &f->link);
    Py_XDECREF(tb);
  }
  return finish_pop(f, interrupt) ? Py_NewRef(Py_None) : nullptr;
}

PyObject *nf_enter(PyObject *self, PyObject *) {
  if (!push_frame(as_nf(self), false)) return nullptr;
  return Py_NewRef(self);
}

// The exception leaving the block gets this frame's entry right after the entry of the
// frame running the `with` (already at the head of its traceback: CPython adds it before
// running the handler that calls __exit__). GeneratorExit is control flow, not an error.
// An interrupt raised by the frame's locals reifier meanwhile is raised instead, the
// exception as its __context__.
PyObject *nf_exit(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
  PyNativeFrame *f = as_nf(self);
  PyObject *interrupt = nullptr;
  if (nargs == 3 && annotates(args[1]) && active(f))
    interrupt = insert_traceback(args[1], args[2], f->link.marker, &f->executable->exe,
                                 f->link.state, &f->link);
  return finish_pop(f, interrupt) ? Py_NewRef(Py_False) : nullptr;
}

PyObject *nf_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  PyObject *fn;
  if ((kwargs && PyDict_GET_SIZE(kwargs)) || !PyArg_ParseTuple(args, "O:NativeFrame", &fn))
    return PyErr_Format(PyExc_TypeError, "a NativeFrame decorates one function: @frame");
  if (!PyCallable_Check(fn))
    return PyErr_Format(PyExc_TypeError, "a NativeFrame decorates a callable, not %.200s",
                        Py_TYPE(fn)->tp_name);
  PyObject *wrapper = framed_function_type->tp_alloc(framed_function_type, 0);
  if (!wrapper) return nullptr;
  init_framed(wrapper, fn, as_nf(self));
  return wrapper;
}

PyObject *nf_get_state(PyObject *self, void *) {
  return PyLong_FromUnsignedLongLong(as_nf(self)->link.state);
}
int nf_set_state(PyObject *self, PyObject *value, void *) {
  if (!value) {
    PyErr_SetString(PyExc_AttributeError, "cannot delete a native frame's state");
    return -1;
  }
  PyNativeFrame *f = as_nf(self);
  if (!parse_state(value, &f->link.state)) return -1;
  if (f->visible_slot.frame) visible_set_state(&f->visible_slot, f->visible, f->link.state);
  return 0;
}
PyObject *nf_get_active(PyObject *self, void *) { return PyBool_FromLong(active(as_nf(self))); }

// The variables of a frame whose handle was given `locals` (context: the PyNativeFrame,
// active while registered): the mapping itself (the reader copies it), or what the callable
// returns for `state`.
PyObject *own_locals(const Executable *, std::uintptr_t state, void *context) {
  PyObject *source = static_cast<PyNativeFrame *>(context)->locals;
  if (!source) return PyDict_New();
  if (!PyCallable_Check(source)) return Py_NewRef(source);
  Py_INCREF(source);  // the call may replace the frame's locals
  PyObject *arg = PyLong_FromUnsignedLongLong(state);
  PyObject *result = arg ? PyObject_CallOneArg(source, arg) : nullptr;
  Py_XDECREF(arg);
  Py_DECREF(source);
  return result;
}

PyObject *nf_get_locals(PyObject *self, void *) {
  PyObject *locals = as_nf(self)->locals;
  return Py_NewRef(locals ? locals : Py_None);
}

// Registered as the frame's own locals reifier until the pop (or None/del): readers of this
// activation see them before the executable's locals=.
int nf_set_locals(PyObject *self, PyObject *value, void *) {
  PyNativeFrame *f = as_nf(self);
  if (value == Py_None) value = nullptr;
  if (value && !PyCallable_Check(value) && !is_variables_mapping(value)) {
    PyErr_Format(PyExc_TypeError,
                 "a native frame's locals must be a mapping of variable names to values, a "
                 "callable (state: int) -> such a mapping, or None, not %.200s",
                 Py_TYPE(value)->tp_name);
    return -1;
  }
  PyObject *old = f->locals;
  if (!active(f)) {  // kept for the next push, which registers them (register_own_locals)
    f->locals = Py_XNewRef(value);
    Py_XDECREF(old);
    return 0;
  }
  if (!value) {
    if (f->special & kOwnLocals) {
      set_frame_locals(&f->link, nullptr, nullptr, nullptr);
      f->special &= std::uint8_t(~kOwnLocals);
    }
    f->locals = nullptr;
    Py_XDECREF(old);
    return 0;
  }
  if (!(f->special & kOwnLocals)) {
    VisibleSlot *slot = f->visible_slot.frame ? &f->visible_slot : nullptr;
    if (register_frame_locals(&f->link, slot, &own_locals, f, true) < 0) {
      PyErr_NoMemory();
      return -1;
    }
    f->special |= kOwnLocals;
  }
  f->locals = Py_NewRef(value);
  Py_XDECREF(old);
  return 0;
}

// `frame.state = pc` runs once per guest statement and `frame.locals = env` once per guest
// call, and CPython does not specialise a store through a C setter (STORE_ATTR): the
// interned names compiled code passes go straight to their setters instead of the type
// lookup and descriptor call; anything else (a deletion too), the generic path.
PyObject *state_name = nullptr;   // interned "state", held for the process
PyObject *locals_name = nullptr;  // interned "locals", held for the process
int nf_setattro(PyObject *self, PyObject *name, PyObject *value) {
  if (value) {
    if (name == state_name) return nf_set_state(self, value, nullptr);
    if (name == locals_name) return nf_set_locals(self, value, nullptr);
  }
  return PyObject_GenericSetAttr(self, name, value);
}

PyObject *nf_repr(PyObject *self) {
  PyNativeFrame *f = as_nf(self);
  return PyUnicode_FromFormat("<callsite.native.NativeFrame of %R state=%llu%s>",
                              f->executable->name, (unsigned long long)f->link.state,
                              active(f) ? " active" : "");
}

PyMemberDef nf_members[] = {
    {"executable", T_OBJECT, offsetof(PyNativeFrame, executable), READONLY,
     "the callsite.native.Executable"},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(PyNativeFrame, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef nf_getset[] = {
    {"state", nf_get_state, nf_set_state,
     "int: where the frame is (an op index, a pc); read by captures, passed to the reifier",
     nullptr},
    {"active", nf_get_active, nullptr, "bool: pushed and not yet popped", nullptr},
    {"locals", nf_get_locals, nf_set_locals,
     "this activation's variables, read only when someone reads them: a mapping of names to "
     "values, or a callable (state: int) -> such a mapping; before the executable's "
     "locals=, until the pop (None: the executable's)",
     nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyMethodDef nf_methods[] = {
    {"push", nf_push, METH_NOARGS, "push($self, /)\n--\n\nmakes the frame active (as `with` does)."},
    {"pop", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(nf_pop)),
     METH_FASTCALL | METH_KEYWORDS,
     "pop($self, /, exc=None)\n--\n\ndeactivates it. RuntimeError if it is not active, was pushed on another thread, "
     "or a frame pushed after it is still active (then it is unlinked anyway). With `exc`, an "
     "exception passing through the frame, the frame's entry is first put into exc's traceback, "
     "where `with` would put it (a loop interpreter unwinding its guest frames)."},
    {"__enter__", nf_enter, METH_NOARGS, nullptr},
    {"__exit__", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(nf_exit)),
     METH_FASTCALL, nullptr},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot nf_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "NativeFrame(executable, state=0)\n--\n\n"
                    "A native frame driven from Python: `with` pushes it on this thread's "
                    "shadow stack (from a generator or coroutine it follows that frame "
                    "instead), `state` says where it is. Used as a decorator, every call of "
                    "the function runs in a fresh frame (callsite.native.current() returns it).\n\n"
                    R"doc(Raises:
    TypeError: ``executable`` is not an Executable, as in ``native.NativeFrame(3)``.
    OverflowError: a state outside [0, 2**64), as in ``native.NativeFrame(exe,
        state=-1)``.
    RuntimeError: ``pop()`` of a frame that is not active, as in
        ``native.NativeFrame(exe).pop()``.
    TypeError: ``locals`` set to something that is not a mapping, a callable or None, as
        in ``setattr(native.NativeFrame(exe), 'locals', 3)``.
    TypeError: ``pop(exc)`` with ``exc`` neither an exception nor None, as in
        ``native.NativeFrame(exe).pop(3)``.

Example:
    ::

        import callsite
        from callsite import native

        exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1))
        with native.NativeFrame(exe) as frame:
            frame.state = 41
            print(callsite.capture()[0].filename, callsite.capture()[0].lineno)   # prog.dsl 42
)doc")},
    {Py_tp_new, reinterpret_cast<void *>(nf_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(nf_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(nf_traverse)},
    {Py_tp_repr, reinterpret_cast<void *>(nf_repr)},
    {Py_tp_call, reinterpret_cast<void *>(nf_call)},
    {Py_tp_setattro, reinterpret_cast<void *>(nf_setattro)},
    {Py_tp_members, nf_members},
    {Py_tp_getset, nf_getset},
    {Py_tp_methods, nf_methods},
    {0, nullptr}};

PyType_Spec nf_spec = {"callsite.native.NativeFrame", int(sizeof(PyNativeFrame)), 0,
                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC, nf_slots};

// --- the decorator's wrapper ---------------------------------------------------------------

struct FramedFunction {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *fn;
  ExecutableObject *executable;
  std::uintptr_t state;  ///< every call starts its fresh frame here
  PyObject *dict, *weakrefs;
};

inline FramedFunction *as_ff(PyObject *o) { return reinterpret_cast<FramedFunction *>(o); }

// A decorator call's frame after its pop. Held by nothing else (nobody kept what current()
// returned), it goes straight back to the spares without the deallocator's round trip
// (its type's reference and its header stay as new_native_frame would set them again);
// held, or with weak references, it is released as any object.
void release_call_frame(PyNativeFrame *f) {
  PyObject *obj = as_obj(f);
  if (Py_REFCNT(obj) != 1 || f->weakrefs || f->locals || spare_count == kSpareFrames ||
      f->special) [[unlikely]] {
    Py_DECREF(obj);
    return;
  }
  PyObject_GC_UnTrack(obj);
  ExecutableObject *executable = f->executable;
  f->executable = nullptr;
  spare_frames[spare_count++] = f;
  spare_live[spare_count - 1] = true;
  Py_DECREF(executable);  // may run any code: the spare is consistent by now
}

// One fresh frame per call (recursion gets one per level). The frame is pushed from C, so
// its marker is the caller's frame and a capture shows caller → native → function. An
// exception leaving the function gets the entry at the head of its traceback, where the
// caller's entry will be prepended next.
PyObject *ff_vectorcall(PyObject *self, PyObject *const *args, std::size_t nargsf,
                        PyObject *kwnames) {
  FramedFunction *w = as_ff(self);
  if (!w->fn) {
    PyErr_SetString(PyExc_RuntimeError, "the wrapped function was cleared");
    return nullptr;
  }
  // visible=True: also a real interpreter frame, linked only around this nested call. Its
  // code is built on the first call, running reifiers, which may run any code: before
  // anything is pushed (w, held by our caller, keeps w->executable).
  const VisibleCode *visible =
      w->executable->visible_states >= 0 ? visible_code_of(w->executable) : nullptr;
  if (!visible && PyErr_Occurred()) return nullptr;
  PyObject *frame = new_native_frame(w->executable, w->state);
  if (!frame) return nullptr;
  PyNativeFrame *f = as_nf(frame);
  if (!push_frame(f, true)) {
    Py_DECREF(frame);
    return nullptr;
  }
  if (visible && push_interpreter_frame(visible, f->link.state, &f->visible_slot, &f->link))
    f->visible = visible;
  PyObject *result = PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
  if (f->visible_slot.frame) {
    if (!result) visible_traceback_here();
    pop_interpreter_frame(&f->visible_slot, 1);
  } else if (!result) {
    add_traceback(&w->executable->exe, f->link.state, &f->link);
  }
  if (active(f)) pop_frame(f, false);  // the function may have popped it itself: fine
  release_call_frame(f);
  return result;
}

int ff_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(as_ff(self)->fn);
  Py_VISIT(as_ff(self)->executable);
  Py_VISIT(as_ff(self)->dict);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int ff_clear(PyObject *self) {
  Py_CLEAR(as_ff(self)->fn);
  Py_CLEAR(as_ff(self)->dict);
  return 0;
}

void ff_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  if (as_ff(self)->weakrefs) PyObject_ClearWeakRefs(self);
  ff_clear(self);
  Py_CLEAR(as_ff(self)->executable);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject *ff_call(PyObject *self, PyObject *args, PyObject *kwargs) {
  return PyVectorcall_Call(self, args, kwargs);
}

// Binds like a function, so decorated methods receive self.
PyObject *ff_descr_get(PyObject *self, PyObject *obj, PyObject *) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

PyObject *ff_repr(PyObject *self) {
  return PyUnicode_FromFormat("<callsite.native framed function %R of %R>", as_ff(self)->fn,
                              as_ff(self)->executable->name);
}

PyMemberDef ff_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(FramedFunction, fn), READONLY, "the function"},
    {"executable", T_OBJECT, offsetof(FramedFunction, executable), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(FramedFunction, vectorcall), READONLY,
     nullptr},
    {"__dictoffset__", T_PYSSIZET, offsetof(FramedFunction, dict), READONLY, nullptr},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(FramedFunction, weakrefs), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef ff_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot ff_slots[] = {
    {Py_tp_doc, const_cast<char *>("A function whose every call runs in a fresh native frame.\n\n"
                                   R"doc(Example:
    ::

        from callsite import native

        exe = native.Executable("kernel", lambda pc: native.Location("kernel.dsl", pc + 1))

        @native.frame(exe)
        def run():
            native.current().state = 9
            return native.stack()

        print(type(run).__name__, run())                     # FramedFunction [('kernel', 'python', 9)]
)doc")},
    {Py_tp_dealloc, reinterpret_cast<void *>(ff_dealloc)},
    {Py_tp_traverse, reinterpret_cast<void *>(ff_traverse)},
    {Py_tp_clear, reinterpret_cast<void *>(ff_clear)},
    {Py_tp_call, reinterpret_cast<void *>(ff_call)},
    {Py_tp_descr_get, reinterpret_cast<void *>(ff_descr_get)},
    {Py_tp_repr, reinterpret_cast<void *>(ff_repr)},
    {Py_tp_members, ff_members},
    {Py_tp_getset, ff_getset},
    {0, nullptr}};

PyType_Spec ff_spec = {"callsite.native.FramedFunction", int(sizeof(FramedFunction)), 0,
                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                           Py_TPFLAGS_DISALLOW_INSTANTIATION,
                       ff_slots};

}  // namespace

void init_framed(PyObject *wrapper, PyObject *fn, struct PyNativeFrame *frame) {
  FramedFunction *w = as_ff(wrapper);
  w->vectorcall = ff_vectorcall;
  w->fn = Py_NewRef(fn);
  w->executable = reinterpret_cast<ExecutableObject *>(Py_NewRef(frame->executable));
  w->state = frame->link.state;
}

PyTypeObject *init_native_frame_types() noexcept {
  if (!state_name && !(state_name = PyUnicode_InternFromString("state"))) return nullptr;
  if (!locals_name && !(locals_name = PyUnicode_InternFromString("locals"))) return nullptr;
  if (!native_frame_type)
    native_frame_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&nf_spec));
  if (native_frame_type && !framed_function_type)
    framed_function_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&ff_spec));
  return framed_function_type ? native_frame_type : nullptr;
}

PyObject *new_native_frame(ExecutableObject *executable, std::uintptr_t state) noexcept {
  PyNativeFrame *f;
  if (spare_count) {
    f = spare_frames[--spare_count];
    // As tp_alloc leaves a new object: every field zero, one reference, its type held, tracked.
    std::memset(reinterpret_cast<char *>(f) + sizeof(PyObject), 0,
                sizeof(PyNativeFrame) - sizeof(PyObject));
    if (!spare_live[spare_count]) PyObject_Init(as_obj(f), native_frame_type);
    PyObject_GC_Track(as_obj(f));
  } else {
    f = reinterpret_cast<PyNativeFrame *>(native_frame_type->tp_alloc(native_frame_type, 0));
    if (!f) return nullptr;
  }
  f->link = NativeLink{nullptr, nullptr, &executable->exe, state};
  f->executable = reinterpret_cast<ExecutableObject *>(Py_NewRef(executable));
  return as_obj(f);
}

bool parse_state(PyObject *value, std::uintptr_t *out) noexcept {
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    PyErr_Format(PyExc_TypeError, "a native frame's state must be an int, not %.200s",
                 Py_TYPE(value)->tp_name);
    return false;
  }
  const unsigned long long v = PyLong_AsUnsignedLongLong(value);
  if (v == (unsigned long long)-1 && PyErr_Occurred()) {
    PyErr_Format(PyExc_OverflowError, "a native frame's state must be in [0, 2**64), got %R",
                 value);
    return false;
  }
  *out = std::uintptr_t(v);
  return true;
}

PyObject *current_native_frame() noexcept {
  // Without parked frames the thread's stack is the list itself (no splice, no copies).
  if (!any_parked()) {
    for (const NativeLink *link = innermost(); link; link = link->previous)
      if (python_links.contains(link)) return Py_NewRef(as_obj(from_link(link)));
    Py_RETURN_NONE;
  }
  // A generator's own frames first: they are the innermost when it calls current().
  if (const auto *parked = parked_under(current_marker()); parked && !parked->empty())
    return Py_NewRef(as_obj(from_link(parked->back())));
  for (const NativeLink *seen = innermost(); seen; seen = seen->previous) {
    const NativeLink *link = origin_of(seen);
    if (python_links.contains(link)) return Py_NewRef(as_obj(from_link(link)));
  }
  Py_RETURN_NONE;
}

namespace {
PyObject *current_fn(PyObject *, PyObject *) { return current_native_frame(); }
}  // namespace

// A builtin rather than a nanobind function or a Python wrapper: an interpreter calls it
// once per guest call to reach the frame its decorator pushed.
PyMethodDef current_method = {
    "current", current_fn, METH_NOARGS,
    "current()\n--\n\nThe innermost NativeFrame pushed from Python that is active here, or "
    "None (inside a function decorated with native.frame(exe): the frame of this call).\n\n"
    R"doc(Example:
    ::

        from callsite import native

        exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1))
        print(native.current())                              # None
        with native.frame(exe) as f:
            print(native.current() is f)                     # True
)doc"};

PyObject *native_stack() noexcept {
  // Copied before any object is made: an allocation may collect garbage, whose finalizers
  // may push and pop frames (or rebuild the spliced list) while we would be walking it.
  // The executables made at run time are held too (a popped frame may release its own).
  std::vector<NativeLink> links;
  std::vector<PyObject *> owners;
  try {
    for (const NativeLink *seen = innermost(); seen; seen = seen->previous) {
      links.push_back(*seen);
      owners.reserve(links.size());
      owners.push_back(Py_XNewRef(seen->executable->owner));
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    for (PyObject *o : owners) Py_XDECREF(o);
    return PyErr_NoMemory();
  }
  struct Release {
    std::vector<PyObject *> &owners;
    ~Release() {
      for (PyObject *o : owners) Py_XDECREF(o);
    }
  } release{owners};
  PyObject *list = PyList_New(0);
  if (!list) return nullptr;
  for (const NativeLink &seen : links) {
    const Executable *exe = seen.executable;
    PyObject *item = Py_BuildValue("(ssK)", exe->name ? exe->name : "?",
                                   exe->kind ? exe->kind : "native",
                                   (unsigned long long)seen.state);
    if (!item || PyList_Append(list, item) < 0) {
      Py_XDECREF(item);
      Py_DECREF(list);
      return nullptr;
    }
    Py_DECREF(item);
  }
  return list;
}

}  // namespace callsite::native
