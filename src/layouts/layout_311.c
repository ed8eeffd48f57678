/* layouts/layout_311.c — CPython 3.11: _PyInterpreterFrame chained by `previous`, reached
 * through tstate->cframe->current_frame.
 *
 * Read from the v3.11.7 headers: internal/pycore_frame.h (struct _PyInterpreterFrame:
 * f_code, previous, prev_instr, owner; enum _frameowner without a C-stack owner;
 * _PyFrame_IsIncomplete), cpython/pystate.h (CFrame.current_frame). */
#include <Python.h>
#include <frameobject.h>
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#undef Py_BUILD_CORE

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030C0000
#error "layout_311.c is for CPython 3.11 only"
#endif

/* Every frame on the chain is a Python frame; generator frames are never incomplete. */
#define CALLSITE_HIDDEN_OWNER(owner) 0
#define CALLSITE_OWNER_TEST_FIRST 1
#define CALLSITE_WALK_NAME walk_311
#include "layouts/cframe_frame.inc.h"

#define CALLSITE_LAYOUT_NAME "internal-3.11"
#include "layouts/layout_tail.inc.h"
