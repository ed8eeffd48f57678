/* layouts/layout_314.c — CPython 3.14: as 3.13 (tstate->current_frame, `previous`,
 * instr_ptr), but f_executable is a tagged _PyStackRef and the frame-owner enum gained
 * FRAME_OWNED_BY_INTERPRETER below FRAME_OWNED_BY_CSTACK.
 *
 * Read from the v3.14.10 headers (Debian python3.14-dev 3.14.10):
 * - internal/pycore_interpframe_structs.h: struct _PyInterpreterFrame { _PyStackRef
 *   f_executable; struct _PyInterpreterFrame *previous; ...; _Py_CODEUNIT *instr_ptr; ...;
 *   char owner; ... }; enum _frameowner { THREAD = 0, GENERATOR = 1, FRAME_OBJECT = 2,
 *   INTERPRETER = 3, CSTACK = 4 }.
 * - internal/pycore_stackref.h (GIL build): Py_TAG_BITS 3; PyStackRef_AsPyObjectBorrow
 *   clears the Py_TAG_REFCNT bit. Code objects are never tagged ints, so clearing every tag
 *   bit gives the same pointer.
 * - internal/pycore_interpframe.h: _PyFrame_IsIncomplete is `owner >= FRAME_OWNED_BY_INTERPRETER`
 *   (entry frames and C-stack shims), or a non-generator frame whose instr_ptr is before
 *   _PyFrame_GetBytecode(f) + _co_firsttraceable; _PyFrame_GetBytecode is _PyCode_CODE(code)
 *   without Py_GIL_DISABLED.
 * - cpython/pystate.h: PyThreadState.current_frame. */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030E0000 || PY_VERSION_HEX >= 0x030F0000
#error "layout_314.c is for CPython 3.14 only"
#endif

/* Free-threaded builds (per-thread bytecode: tlbc_index, _PyFrame_GetBytecode differs) have
 * no tested layout: select.c refuses them and this file compiles to nothing. */
#ifndef Py_GIL_DISABLED
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_interpframe.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE

#define CALLSITE_EXECUTABLE(f) ((PyObject *)((f)->f_executable.bits & ~(uintptr_t)Py_TAG_BITS))
#define CALLSITE_HIDDEN_OWNER(owner) ((owner) >= FRAME_OWNED_BY_INTERPRETER)
#define CALLSITE_WALK_NAME walk_314
#include "layouts/interpreter_frame.inc.h"

/* Every offset the walker reads that CPython publishes (3.14 internal/pycore_debug_offsets.h). */
#define CALLSITE_DEBUG_OFFSETS CALLSITE_WALKER_FACTS
#define CALLSITE_LAYOUT_NAME "internal-3.14"
#include "layouts/layout_tail.inc.h"
#endif
