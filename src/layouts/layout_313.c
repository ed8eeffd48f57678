/* layouts/layout_313.c — CPython 3.13: tstate->current_frame (Include/cpython/pystate.h),
 * _PyInterpreterFrame.f_executable instead of f_code, instr_ptr instead of prev_instr. */
#include <Python.h>
#include <frameobject.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE
#include <string.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030D0000 || PY_VERSION_HEX >= 0x030E0000
#error "layout_313.c is for CPython 3.13 only"
#endif
#ifdef Py_GIL_DISABLED
#error "the free-threaded build has no tested layout; build with LOCUS_FORCE_PUBLIC_API"
#endif

/* f_executable is "code object or None" (3.13 pycore_frame.h) and may be other objects for
 * future executables, so check the type before treating it as code. Shim frames
 * (FRAME_OWNED_BY_CSTACK) and incomplete frames are hidden as _PyFrame_IsIncomplete does. */
static inline PyCodeObject *visible_code_313(_PyInterpreterFrame *f) {
  if (f->owner == FRAME_OWNED_BY_CSTACK) return NULL;
  PyObject *executable = f->f_executable;
  if (!PyCode_Check(executable)) return NULL;
  PyCodeObject *code = (PyCodeObject *)executable;
  if (f->owner != FRAME_OWNED_BY_GENERATOR &&
      f->instr_ptr < _PyCode_CODE(code) + code->_co_firsttraceable)
    return NULL;
  return code;
}
/* _PyInterpreterFrame_LASTI (3.13) = instr_ptr - _PyCode_CODE(code), in code units;
 * PyUnstable_InterpreterFrame_GetLasti multiplies by sizeof(_Py_CODEUNIT). */
static inline int lasti_bytes_313(_PyInterpreterFrame *f, PyCodeObject *code) {
  int units = (int)(f->instr_ptr - _PyCode_CODE(code));
  return units < 0 ? -1 : units * (int)sizeof(_Py_CODEUNIT);
}

#define LOCUS_FRAME_T _PyInterpreterFrame
#define LOCUS_FIRST_FRAME(ts) ((ts)->current_frame)
#define LOCUS_PREVIOUS(f) ((f)->previous)
#define LOCUS_VISIBLE_CODE(f) visible_code_313(f)
#define LOCUS_LASTI_BYTES(f, code) lasti_bytes_313(f, code)
#define LOCUS_WALK_NAME walk_313
#include "layouts/walker.inc.h"

static const void *current_marker_313(PyThreadState *tstate) { return tstate->current_frame; }

const void *locus_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

/* 3.13 publishes the offsets debuggers rely on in _PyRuntime.debug_offsets; refuse when the
 * running interpreter disagrees with the headers this file was compiled against. */
const char *locus_layout_internal_version_refusal(void) {
  const _Py_DebugOffsets *d = &_PyRuntime.debug_offsets;
  if (memcmp(d->cookie, _Py_Debug_Cookie, sizeof(d->cookie)) != 0)
    return "_PyRuntime.debug_offsets has no valid cookie";
  if (d->free_threaded) return "the interpreter is a free-threaded build";
  if (d->thread_state.current_frame != offsetof(PyThreadState, current_frame) ||
      d->interpreter_frame.previous != offsetof(_PyInterpreterFrame, previous) ||
      d->interpreter_frame.executable != offsetof(_PyInterpreterFrame, f_executable) ||
      d->interpreter_frame.instr_ptr != offsetof(_PyInterpreterFrame, instr_ptr) ||
      d->interpreter_frame.owner != offsetof(_PyInterpreterFrame, owner) ||
      d->code_object.co_code_adaptive != offsetof(PyCodeObject, co_code_adaptive))
    return "_Py_DebugOffsets disagree with the compiled _PyInterpreterFrame layout";
  return NULL;
}

const locus_layout locus_layout_compiled = {
    "internal-3.13", PY_VERSION_HEX, walk_313, current_marker_313};
