/* layouts/layout_312.c — CPython 3.12: as 3.11 (tstate->cframe->current_frame, `previous`,
 * prev_instr), with f_code first in the struct and shim frames owned by the C stack.
 *
 * Read from the v3.12.1 headers: internal/pycore_frame.h (struct _PyInterpreterFrame;
 * enum _frameowner with FRAME_OWNED_BY_CSTACK = 3; _PyFrame_IsIncomplete),
 * cpython/pystate.h (_PyCFrame.current_frame). */
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
 * the interpreter; tracebacks never show it. */
#define CALLSITE_HIDDEN_OWNER(owner) ((owner) == FRAME_OWNED_BY_CSTACK)
#define CALLSITE_OWNER_TEST_FIRST 0
#define CALLSITE_WALK_NAME walk_312
#include "layouts/cframe_frame.inc.h"

#define CALLSITE_LAYOUT_NAME "internal-3.12"
#include "layouts/layout_tail.inc.h"
