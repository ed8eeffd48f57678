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
#error "the free-threaded build has no tested layout; build with CALLSITE_FORCE_PUBLIC_API"
#endif

/* f_executable is "code object or None" (3.13 pycore_frame.h) and may be other objects for
 * future executables, so check the type before treating it as code. Shim frames
 * (FRAME_OWNED_BY_CSTACK) and incomplete frames are hidden as _PyFrame_IsIncomplete does. */
static inline PyCodeObject *inspect_313(_PyInterpreterFrame *f, intptr_t *lasti) {
  if (f->owner == FRAME_OWNED_BY_CSTACK) return NULL;
  PyObject *executable = f->f_executable;
  if (!PyCode_Check(executable)) return NULL;
  PyCodeObject *code = (PyCodeObject *)executable;
  /* Byte distance = code units * sizeof(_Py_CODEUNIT): _PyInterpreterFrame_LASTI in bytes,
   * as PyFrame_GetLasti reports it. The "incomplete" test of _PyFrame_IsIncomplete compares
   * the same distance with _co_firsttraceable; generator frames are never incomplete. */
  const intptr_t bytes = (const char *)f->instr_ptr - (const char *)_PyCode_CODE(code);
  /* The offset test comes first: it is false for nearly every frame, so the owner is read
   * only for the rare frame still in set-up. No clamp to -1 is needed: instr_ptr starts at
   * _PyCode_CODE(code) (3.13 _PyFrame_Initialize), so the distance is never negative. */
  if (bytes < (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT) &&
      f->owner != FRAME_OWNED_BY_GENERATOR)
    return NULL;
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) inspect_313(f, lasti)
#define CALLSITE_WALK_NAME walk_313
#include "layouts/walker.inc.h"

static const void *current_marker_313(PyThreadState *tstate) { return tstate->current_frame; }

const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

/* 3.13 publishes the offsets debuggers rely on in _PyRuntime.debug_offsets; refuse when the
 * running interpreter disagrees with the headers this file was compiled against. */
const char *callsite_layout_internal_version_refusal(void) {
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

const callsite_layout callsite_layout_compiled = {
    "internal-3.13", PY_VERSION_HEX, walk_313, current_marker_313};
