// native/exception_entry.cc — traceback entries for native frames: a fresh frame over an
// EMPTY code object per (filename, name, line) (guest_module.h), as Cython's __Pyx_AddTraceback
// does, with the globals of its guest file. Pairing a
// frame with a real code object crashed on 3.11+ (jax#16027), so reified code objects are
// never used here. The line goes in tb_lineno; the code object has no positions at all, so
// traceback.py (3.11+: _walk_tb_with_full_positions) falls back to tb_lineno.
#include "native/exception_entry.h"

#include <frameobject.h>

#include "core/compat.h"
#include "layouts/layout.h"
#include "native/frame_locals.h"
#include "native/guest_module.h"
#include "native/reify.h"

namespace callsite::native {
namespace {

// A new traceback entry for the native frame `link` (nullptr: the calling thread's innermost
// frame of `exe` at `state` with a reifier of its own, else none) in front of `next` (may be
// nullptr). A frame with a locals reifier gets its variables now, as the exception passes it
// (the empty code is not CO_OPTIMIZED: frame.f_locals is that dict on every version). When
// reading them fails (an interrupt, a warning turned into an error), the entry stays without
// variables and *failure takes the reader's exception.
PyObject *new_entry(const Executable *exe, std::uintptr_t state, const NativeLink *link,
                    PyObject *next, PyObject **failure) {
  PyObject *locals = nullptr;
  if (any_locals && !link) link = registered_link(exe, state);
  if (any_locals && has_locals(exe, link)) {
    PyObject *owner = Py_XNewRef(exe->owner);  // the reifier may drop it
    locals = read_locals(exe, state, link);
    if (!locals) *failure = compat::take_raised_exception();
    const bool alive = !owner || Py_REFCNT(owner) > 1;
    Py_XDECREF(owner);
    if (!alive) {
      Py_XDECREF(locals);
      PyErr_SetString(PyExc_RuntimeError,
                      "callsite: the executable was destroyed by its locals reifier");
      return nullptr;
    }
  }
  const Reified *r = reify(exe, state);
  if (!r) {
    Py_XDECREF(locals);
    return nullptr;
  }
  // Copied and held: what follows allocates (a collection may run finalizers, which may
  // reify other states and release this entry).
  const int lineno = r->lineno;
  PyObject *filename = Py_NewRef(r->filename), *name = Py_NewRef(r->name);
  // The guest file's globals, never the raiser's: traceback reads the entry's source through
  // f_globals (linecache.lazycache) and sentry_sdk its module name and loader.
  PyObject *function = guest_function_of(exe, filename);
  const int first_line =
      function ? guest_first_line(filename, PyFunction_GET_GLOBALS(function), lineno) : -1;
  PyObject *code = first_line >= 0 ? empty_code(filename, name, first_line) : nullptr;
  Py_DECREF(filename);
  Py_DECREF(name);
  if (!code) {
    Py_XDECREF(function);
    Py_XDECREF(locals);
    return nullptr;
  }
  PyFrameObject *frame = PyFrame_New(PyThreadState_Get(), reinterpret_cast<PyCodeObject *>(code),
                                     PyFunction_GET_GLOBALS(function), locals);
  Py_DECREF(function);
  Py_DECREF(code);
  Py_XDECREF(locals);
  if (!frame) return nullptr;
  // Its f_lineno is the entry's line (readers of tb.tb_frame.f_lineno: IPython, pdb's list).
  if (lineno > 0) callsite_set_frame_object_line(frame, lineno);
  PyObject *tb = PyObject_CallFunction(reinterpret_cast<PyObject *>(&PyTraceBack_Type), "OOii",
                                       next ? next : Py_None, frame, 0, lineno);
  Py_DECREF(frame);
  return tb;
}

// What reading a frame's variables raised while `value` passed the frame: an interrupt
// (KeyboardInterrupt, SystemExit: not an Exception) is what propagates from here on, with
// `value` as its __context__, as an exception raised in an `except` block; anything else is
// reported through sys.unraisablehook and `value` goes on. Returns what propagates (the
// reference to `failure` or `value` is passed on, the other one released).
// new_entry gave no entry: the error it raised is the failure, unless reading the variables
// failed before (an interrupt is not to be lost to a later error).
void keep_first_failure(PyObject **failure) {
  PyObject *error = compat::take_raised_exception();
  if (*failure)
    Py_XDECREF(error);
  else
    *failure = error;
}

PyObject *outcome(PyObject *value, PyObject *failure) {
  if (!failure) return value;
  if (!PyErr_GivenExceptionMatches(failure, PyExc_Exception)) {
    if (value) PyException_SetContext(failure, value);  // steals value
    return failure;
  }
  compat::restore_raised_exception(failure);
  PyErr_WriteUnraisable(value);
  return value;
}

}  // namespace

int add_traceback(const Executable *exe, std::uintptr_t state) {
  return add_traceback(exe, state, nullptr);
}

int add_traceback(const Executable *exe, std::uintptr_t state, const NativeLink *link) {
  PyObject *value = compat::take_raised_exception();
  if (!value) return -1;
  PyObject *tb = PyException_GetTraceback(value);  // new reference or nullptr
  PyObject *failure = nullptr;
  PyObject *entry = new_entry(exe, state, link, tb, &failure);
  if (entry)
    PyException_SetTraceback(value, entry);
  else
    keep_first_failure(&failure);
  Py_XDECREF(entry);
  Py_XDECREF(tb);
  compat::restore_raised_exception(outcome(value, failure));
  return 0;
}

PyObject *insert_traceback(PyObject *value, PyObject *tb, const void *marker,
                           const Executable *exe, std::uintptr_t state, const NativeLink *link) {
  if (tb && !PyTraceBack_Check(tb)) return nullptr;
  PyTracebackObject *after = nullptr;
  for (auto *t = reinterpret_cast<PyTracebackObject *>(tb); t; t = t->tb_next)
    if (t->tb_frame && callsite_marker_of_frame_object(t->tb_frame) == marker) {
      after = t;
      break;
    }
  // Held: new_entry runs the reifier, which may rewrite the traceback chain.
  PyObject *held = Py_XNewRef(reinterpret_cast<PyObject *>(after));
  PyObject *next = Py_XNewRef(after ? reinterpret_cast<PyObject *>(after->tb_next) : tb);
  PyObject *failure = nullptr;
  PyObject *entry = new_entry(exe, state, link, next, &failure);
  Py_XDECREF(next);
  if (!entry) keep_first_failure(&failure);
  if (held && entry) {
    // tb_next is writable (3.7+); the same traceback object is re-raised after __exit__.
    if (PyObject_SetAttrString(held, "tb_next", entry) < 0) PyErr_WriteUnraisable(value);
  } else if (entry && value && PyExceptionInstance_Check(value)) {
    PyException_SetTraceback(value, entry);
  }
  Py_XDECREF(entry);
  Py_XDECREF(held);
  PyObject *propagating = outcome(Py_XNewRef(value), failure);
  if (propagating == value) {
    Py_XDECREF(propagating);
    return nullptr;
  }
  return propagating;
}

}  // namespace callsite::native
