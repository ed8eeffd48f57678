// native/exception_entry.cc — traceback entries for native frames: a fresh frame over an
// EMPTY code object per (filename, name) (guest_module.h), as Cython's __Pyx_AddTraceback
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

// A new traceback entry for the native frame in front of `next` (may be nullptr). A frame
// with a locals reifier gets its variables now, as the exception passes it (the empty code
// is not CO_OPTIMIZED: frame.f_locals is that dict on every version).
PyObject *new_entry(const Executable *exe, std::uintptr_t state, PyObject *next) {
  PyObject *locals = nullptr;
  const NativeLink *link = any_locals ? registered_link(exe, state) : nullptr;
  if (any_locals && has_locals(exe, link)) {
    PyObject *owner = Py_XNewRef(exe->owner);  // the reifier may drop it
    locals = read_locals(exe, state, link);
    const bool alive = !owner || Py_REFCNT(owner) > 1;
    Py_XDECREF(owner);
    if (!locals) return nullptr;
    if (!alive) {
      Py_DECREF(locals);
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
  if (!r) return nullptr;
  // Copied and held: what follows allocates (a collection may run finalizers, which may
  // reify other states and release this entry).
  const int lineno = r->lineno;
  PyObject *filename = Py_NewRef(r->filename), *name = Py_NewRef(r->name);
  PyObject *code = empty_code(filename, name);
  // The guest file's globals, never the raiser's: traceback reads the entry's source through
  // f_globals (linecache.lazycache) and sentry_sdk its module name and loader.
  PyObject *function = code ? guest_function_of(exe, filename) : nullptr;
  Py_DECREF(filename);
  Py_DECREF(name);
  if (!function) {
    Py_XDECREF(code);
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

}  // namespace

int add_traceback(const Executable *exe, std::uintptr_t state) {
  PyObject *value = compat::take_raised_exception();
  if (!value) return -1;
  PyObject *tb = PyException_GetTraceback(value);  // new reference or nullptr
  PyObject *entry = new_entry(exe, state, tb);
  if (entry)
    PyException_SetTraceback(value, entry);
  else
    PyErr_WriteUnraisable(value);  // reporting the failure, keeping the exception
  Py_XDECREF(entry);
  Py_XDECREF(tb);
  compat::restore_raised_exception(value);
  return 0;
}

void insert_traceback(PyObject *value, PyObject *tb, const void *marker,
                      const Executable *exe, std::uintptr_t state) {
  if (!tb || !PyTraceBack_Check(tb)) return;
  PyTracebackObject *after = nullptr;
  for (auto *t = reinterpret_cast<PyTracebackObject *>(tb); t; t = t->tb_next)
    if (t->tb_frame && callsite_marker_of_frame_object(t->tb_frame) == marker) {
      after = t;
      break;
    }
  // Held: new_entry runs the reifier, which may rewrite the traceback chain.
  PyObject *held = Py_XNewRef(reinterpret_cast<PyObject *>(after));
  PyObject *next = Py_XNewRef(after ? reinterpret_cast<PyObject *>(after->tb_next) : tb);
  PyObject *entry = new_entry(exe, state, next);
  Py_XDECREF(next);
  if (!entry) {
    PyErr_WriteUnraisable(value);
    Py_XDECREF(held);
    return;
  }
  if (held) {
    // tb_next is writable (3.7+); the same traceback object is re-raised after __exit__.
    if (PyObject_SetAttrString(held, "tb_next", entry) < 0) PyErr_WriteUnraisable(value);
  } else if (value && PyExceptionInstance_Check(value)) {
    PyException_SetTraceback(value, entry);
  }
  Py_DECREF(entry);
  Py_XDECREF(held);
}

}  // namespace callsite::native
