/* layouts/layout_314.c — CPython 3.14: the frame of layouts/stackref_frame.inc.h (a tagged
 * f_executable); the frame-owner enum gained FRAME_OWNED_BY_INTERPRETER below
 * FRAME_OWNED_BY_CSTACK.
 *
 * Read from the v3.14.10 headers (Debian python3.14-dev 3.14.10):
 * internal/pycore_interpframe_structs.h: enum _frameowner { THREAD = 0, GENERATOR = 1,
 * FRAME_OBJECT = 2, INTERPRETER = 3, CSTACK = 4 }; cpython/pystate.h:
 * PyThreadState.current_frame. */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030E0000 || PY_VERSION_HEX >= 0x030F0000
#error "layout_314.c is for CPython 3.14 only"
#endif

/* Free-threaded builds (per-thread bytecode: tlbc_index, _PyFrame_GetBytecode differs) have
 * no tested layout: select.c refuses them and this file compiles to nothing. */
#ifndef Py_GIL_DISABLED
#define CALLSITE_WALK_NAME walk_314
#include "layouts/stackref_frame.inc.h"

/* Every offset the walker reads that CPython publishes (3.14 internal/pycore_debug_offsets.h). */
#define CALLSITE_DEBUG_OFFSETS CALLSITE_WALKER_FACTS
#define CALLSITE_LAYOUT_NAME "internal-3.14"
#include "layouts/layout_tail.inc.h"
#endif
