/* layouts/layout_310.c — CPython 3.10: frames are PyFrameObjects chained by f_back.
 *
 * 3.10 needs no internal header: PyFrameObject (Include/cpython/frameobject.h) and
 * PyThreadState.frame (Include/cpython/pystate.h) are in the non-limited public headers,
 * read from v3.10.13. */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030A0000 || PY_VERSION_HEX >= 0x030B0000
#error "layout_310.c is for CPython 3.10 only"
#endif

#define CALLSITE_FRAME_T PyFrameObject
#define CALLSITE_FIRST_FRAME(ts) ((ts)->frame)
#define CALLSITE_PREVIOUS(f) ((f)->f_back)
/* Every frame on the 3.10 chain is a real, complete Python frame. f_lasti counts code units,
 * -1 before the first instruction; frame_getlasti (3.10 Objects/frameobject.c) reports bytes:
 * f_lasti * sizeof(_Py_CODEUNIT), or -1. */
static inline PyCodeObject *inspect_310(PyFrameObject *f, intptr_t *lasti) {
  *lasti = f->f_lasti < 0 ? -1 : (intptr_t)f->f_lasti * (intptr_t)sizeof(_Py_CODEUNIT);
  return f->f_code;
}
#define CALLSITE_INSPECT(f, lasti) inspect_310(f, lasti)
#define CALLSITE_WALK_NAME walk_310
#include "layouts/walker.inc.h"

static const void *walk_310_marker(PyThreadState *tstate) { return tstate->frame; }

const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame; }

/* 3.10's PyFrame_GetLineNumber reads f_lineno only while the frame is traced (else the line
 * of f_lasti): nothing to set. */
void callsite_layout_internal_set_line(PyFrameObject *frame, int line) {
  (void)frame;
  (void)line;
}

#define CALLSITE_LAYOUT_NAME "internal-3.10"
#include "layouts/layout_tail.inc.h"
