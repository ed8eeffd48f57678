/* layouts/stackref_frame.inc.h — the 3.14+ frame access, written once for the layout files of
 * 3.14 and 3.15, whose _PyInterpreterFrame has the same fields at the same offsets: as 3.13
 * (tstate->current_frame, `previous`, instr_ptr), but f_executable is a tagged _PyStackRef and
 * the owners from FRAME_OWNED_BY_INTERPRETER up are hidden.
 *
 * Read from the v3.14.10 headers (Debian python3.14-dev 3.14.10) and the v3.15.2 ones:
 * - internal/pycore_interpframe_structs.h: struct _PyInterpreterFrame { _PyStackRef
 *   f_executable; struct _PyInterpreterFrame *previous; ...; _Py_CODEUNIT *instr_ptr; ...;
 *   char owner; ... }.
 * - internal/pycore_stackref.h (GIL build): Py_TAG_BITS 3; PyStackRef_AsPyObjectBorrow
 *   clears the Py_TAG_REFCNT bit. Code objects are never tagged ints, so clearing every tag
 *   bit gives the same pointer.
 * - internal/pycore_interpframe.h: _PyFrame_IsIncomplete is `owner >= FRAME_OWNED_BY_INTERPRETER`
 *   (entry frames, and 3.14's C-stack shims), or a non-generator frame whose instr_ptr is
 *   before _PyFrame_GetBytecode(f) + _co_firsttraceable; _PyFrame_GetBytecode is
 *   _PyCode_CODE(code) without Py_GIL_DISABLED.
 *
 * A layout file includes <Python.h>, <frameobject.h> and layouts/layout.h, checks its version
 * and, outside free-threaded builds (no tested layout: select.c refuses them), defines
 * CALLSITE_WALK_NAME, then includes this file, then what interpreter_frame.inc.h's users
 * define last (CALLSITE_DEBUG_OFFSETS, CALLSITE_LAYOUT_NAME, layouts/layout_tail.inc.h). */
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_interpframe.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE

#define CALLSITE_EXECUTABLE(f) ((PyObject *)((f)->f_executable.bits & ~(uintptr_t)Py_TAG_BITS))
#define CALLSITE_HIDDEN_OWNER(owner) ((owner) >= FRAME_OWNED_BY_INTERPRETER)
#include "layouts/interpreter_frame.inc.h"
