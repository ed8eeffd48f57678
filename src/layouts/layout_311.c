/* layouts/layout_311.c — CPython 3.11: _PyInterpreterFrame chained by `previous`, reached
 * through tstate->cframe->current_frame (Include/cpython/pystate.h, 3.11). */
#include <Python.h>
#include <frameobject.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "layout_311.c is for CPython 3.11 only"
#endif

/* _PyFrame_IsIncomplete (3.11 pycore_frame.h): a frame whose prev_instr has not reached
 * _co_firsttraceable is still being set up (COPY_FREE_VARS, MAKE_CELL, ...) and CPython hides
 * it from tracebacks and sys._getframe; generator frames are never incomplete. */
static inline PyCodeObject *inspect_311(_PyInterpreterFrame *f, intptr_t *lasti) {
  PyCodeObject *code = f->f_code;
  /* Byte distance = code units * sizeof(_Py_CODEUNIT): _PyInterpreterFrame_LASTI in bytes,
   * as PyFrame_GetLasti reports it. The "incomplete" test of _PyFrame_IsIncomplete compares
   * the same distance with _co_firsttraceable; generator frames are never incomplete. */
  const intptr_t bytes = (const char *)f->prev_instr - (const char *)_PyCode_CODE(code);
  /* The owner test comes first here (unlike 3.12/3.13, which read the owner anyway for the
   * shim test): it measured faster than offset-first at depth 20, per-frame slope
   * unchanged (docs/internals.md). No clamp to -1 is needed: prev_instr starts one
   * unit before the code (_PyFrame_Initialize), which is "incomplete" and hidden, and a
   * generator frame on the chain was copied at RETURN_GENERATOR, past the start. */
  if (f->owner != FRAME_OWNED_BY_GENERATOR &&
      bytes < (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT))
    return NULL;
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->cframe->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) inspect_311(f, lasti)
#define CALLSITE_WALK_NAME walk_311
#include "layouts/walker.inc.h"

static const void *current_marker_311(PyThreadState *tstate) {
  return tstate->cframe->current_frame;
}

/* struct _frame (3.11 pycore_frame.h) points at its interpreter frame through f_frame. */
const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

const char *callsite_layout_internal_version_refusal(void) { return NULL; }

const callsite_layout callsite_layout_compiled = {
    "internal-3.11", PY_VERSION_HEX, walk_311, current_marker_311};
