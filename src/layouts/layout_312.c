/* layouts/layout_312.c — CPython 3.12: as 3.11 (tstate->cframe->current_frame, `previous`),
 * with f_code first in the struct and shim frames owned by the C stack. */
#include <Python.h>
#include <frameobject.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030C0000 || PY_VERSION_HEX >= 0x030D0000
#error "layout_312.c is for CPython 3.12 only"
#endif

/* 3.12 pushes an entry "shim" frame owned by FRAME_OWNED_BY_CSTACK whenever C calls into
 * the interpreter; tracebacks never show it. Incomplete frames: as _PyFrame_IsIncomplete. */
static inline PyCodeObject *inspect_312(_PyInterpreterFrame *f, intptr_t *lasti) {
  if (f->owner == FRAME_OWNED_BY_CSTACK) return NULL;
  PyCodeObject *code = f->f_code;
  /* Byte distance = code units * sizeof(_Py_CODEUNIT): _PyInterpreterFrame_LASTI in bytes,
   * as PyFrame_GetLasti reports it. The "incomplete" test of _PyFrame_IsIncomplete compares
   * the same distance with _co_firsttraceable; generator frames are never incomplete. */
  const intptr_t bytes = (const char *)f->prev_instr - (const char *)_PyCode_CODE(code);
  /* The offset test comes first: it is false for nearly every frame, so the owner is read
   * only for the rare frame still in set-up. No clamp to -1 is needed: prev_instr starts one
   * unit before the code (_PyFrame_Initialize), which is "incomplete" and hidden, and a
   * generator frame on the chain was copied at RETURN_GENERATOR, past the start. */
  if (bytes < (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT) &&
      f->owner != FRAME_OWNED_BY_GENERATOR)
    return NULL;
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->cframe->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) inspect_312(f, lasti)
#define CALLSITE_WALK_NAME walk_312
#include "layouts/walker.inc.h"

static const void *current_marker_312(PyThreadState *tstate) {
  return tstate->cframe->current_frame;
}

const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

const char *callsite_layout_internal_version_refusal(void) { return NULL; }

const callsite_layout callsite_layout_compiled = {
    "internal-3.12", PY_VERSION_HEX, walk_312, current_marker_312};
