/* layouts/layout_313.c — CPython 3.13: tstate->current_frame (Include/cpython/pystate.h),
 * _PyInterpreterFrame.f_executable instead of f_code, instr_ptr instead of prev_instr.
 *
 * Read from the v3.13.0 headers: internal/pycore_frame.h (struct _PyInterpreterFrame with a
 * plain PyObject *f_executable; FRAME_OWNED_BY_CSTACK = 3), internal/pycore_runtime.h
 * (_Py_DebugOffsets), cpython/pystate.h. */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030D0000 || PY_VERSION_HEX >= 0x030E0000
#error "layout_313.c is for CPython 3.13 only"
#endif
/* Free-threaded builds have no tested layout: select.c refuses them, this file is empty. */
#ifndef Py_GIL_DISABLED
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE

/* f_executable is a plain PyObject* (3.13 pycore_frame.h). Shim frames pushed when C calls
 * into the interpreter are owned by FRAME_OWNED_BY_CSTACK; tracebacks never show them. */
#define CALLSITE_EXECUTABLE(f) ((f)->f_executable)
#define CALLSITE_HIDDEN_OWNER(owner) ((owner) == FRAME_OWNED_BY_CSTACK)
#define CALLSITE_WALK_NAME walk_313
#include "layouts/interpreter_frame.inc.h"

/* Every offset the walker reads that CPython publishes (3.13 internal/pycore_runtime.h). */
#define CALLSITE_DEBUG_OFFSETS CALLSITE_WALKER_FACTS
#define CALLSITE_LAYOUT_NAME "internal-3.13"
#include "layouts/layout_tail.inc.h"
#endif
