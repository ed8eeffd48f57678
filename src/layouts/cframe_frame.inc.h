/* layouts/cframe_frame.inc.h — the 3.11/3.12 frame access, written once for the layout files
 * of 3.11 and 3.12: a _PyInterpreterFrame with f_code and prev_instr, chained by `previous`
 * and reached through tstate->cframe->current_frame (Include/cpython/pystate.h of both).
 *
 * A layout file includes CPython's internal headers, defines, then includes this file:
 *   CALLSITE_HIDDEN_OWNER(o)    nonzero for owners whose frames CPython never shows
 *   CALLSITE_OWNER_TEST_FIRST   1: test the generator owner before the offset (see below)
 *   CALLSITE_WALK_NAME          the name of the walk function to define
 * It gets the walker (walker.inc.h), callsite_layout_internal_marker_of and a current-marker
 * function named CALLSITE_WALK_NAME##_marker. */

/* Each macro this file needs, named when missing (the layout file's list above). */
#ifndef CALLSITE_HIDDEN_OWNER
#error "layouts/cframe_frame.inc.h needs CALLSITE_HIDDEN_OWNER defined before it is included"
#endif
#ifndef CALLSITE_OWNER_TEST_FIRST
#error "layouts/cframe_frame.inc.h needs CALLSITE_OWNER_TEST_FIRST defined before it is included"
#endif
#ifndef CALLSITE_WALK_NAME
#error "layouts/cframe_frame.inc.h needs CALLSITE_WALK_NAME defined before it is included"
#endif

/* Frames CPython itself shows: _PyFrame_IsIncomplete's rule (internal/pycore_frame.h), hidden
 * owners first, then a non-generator frame whose prev_instr has not reached
 * _co_firsttraceable (still in its prologue: COPY_FREE_VARS, MAKE_CELL, ...). The offset is
 * the byte distance (code units * sizeof(_Py_CODEUNIT)): _PyInterpreterFrame_LASTI in bytes,
 * as PyFrame_GetLasti reports it. No clamp to -1 is needed: prev_instr starts one unit before
 * the code (_PyFrame_Initialize), which is "incomplete" and hidden, and a generator frame on
 * the chain was copied at RETURN_GENERATOR, past the start. Which of the two incomplete tests
 * comes first is the layout's choice: offset first reads the owner only for the rare frame
 * still in set-up; on 3.11, which has no shim owner to test (so the owner is not read anyway),
 * owner first measured faster at depth 20, per-frame slope unchanged (docs/internals.md). */
static inline PyCodeObject *callsite_inspect_cframe_frame(_PyInterpreterFrame *f,
                                                          intptr_t *lasti) {
  if (CALLSITE_HIDDEN_OWNER(f->owner)) return NULL;
  PyCodeObject *code = f->f_code;
  const intptr_t bytes = (const char *)f->prev_instr - (const char *)_PyCode_CODE(code);
  const intptr_t first = (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT);
#if CALLSITE_OWNER_TEST_FIRST
  if (f->owner != FRAME_OWNED_BY_GENERATOR && bytes < first) return NULL;
#else
  if (bytes < first && f->owner != FRAME_OWNED_BY_GENERATOR) return NULL;
#endif
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->cframe->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) callsite_inspect_cframe_frame(f, lasti)
#include "layouts/walker.inc.h"

static const void *CALLSITE_CAT(CALLSITE_WALK_NAME, _marker)(PyThreadState *tstate) {
  return tstate->cframe->current_frame;
}

/* struct _frame (internal/pycore_frame.h, 3.11+) points at its interpreter frame: f_frame. */
const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

/* A frame object PyFrame_New made for a traceback entry (it never runs): its line, which
 * PyFrame_GetLineNumber returns when f_lineno is non-zero (struct _frame, 3.11+). */
void callsite_layout_internal_set_line(PyFrameObject *frame, int line) { frame->f_lineno = line; }
