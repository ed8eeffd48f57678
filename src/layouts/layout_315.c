/* layouts/layout_315.c — CPython 3.15: the 3.14 frame (layouts/stackref_frame.inc.h, the same
 * _PyInterpreterFrame offsets), no C-stack shim owner any more, and PyThreadState.base_frame,
 * a sentinel at the bottom of every thread's frame chain.
 *
 * Read from the v3.15.2 headers (Debian python3.15-dev 3.15.2):
 * - internal/pycore_interpframe_structs.h: enum _frameowner { THREAD = 0, GENERATOR = 1,
 *   FRAME_OBJECT = 2, INTERPRETER = 3 } (FRAME_OWNED_BY_CSTACK is gone): INTERPRETER is now
 *   the last owner value.
 * - cpython/pystate.h: PyThreadState.current_frame and base_frame ("bottommost sentinel
 *   frame ... used by profilers to validate complete stack unwinding"), which points into
 *   _PyThreadStateImpl (internal/pycore_tstate.h). */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"

#if PY_VERSION_HEX < 0x030F0000 || PY_VERSION_HEX >= 0x03100000
#error "layout_315.c is for CPython 3.15 only"
#endif

/* Free-threaded builds have no tested layout: select.c refuses them, this file is empty. */
#ifndef Py_GIL_DISABLED
#define CALLSITE_WALK_NAME walk_315
#include "layouts/stackref_frame.inc.h"

/* Every offset the walker and its start-up check read that CPython publishes
 * (3.15 internal/pycore_debug_offsets.h). */
#define CALLSITE_DEBUG_OFFSETS \
  CALLSITE_WALKER_FACTS, CALLSITE_FACT(thread_state.base_frame, offsetof(PyThreadState, base_frame))

/* The chain from current_frame must end at base_frame, which the walker hides (its owner is
 * FRAME_OWNED_BY_INTERPRETER): a chain that ends elsewhere means `previous` is not where
 * the headers say, or the walk would stop early. Bounded, as the chain could be garbage. */
static const char *bottom_refusal(void) {
  PyThreadState *tstate = PyThreadState_GetUnchecked();
  if (!tstate || !tstate->base_frame) return "PyThreadState.base_frame is not set";
  const _PyInterpreterFrame *f = tstate->current_frame, *last = NULL;
  for (int steps = 0; f && steps < 100000; ++steps) last = f, f = f->previous;
  if (f || last != tstate->base_frame)
    return "the frame chain does not end at PyThreadState.base_frame";
  if (tstate->base_frame->owner < FRAME_OWNED_BY_INTERPRETER)
    return "PyThreadState.base_frame is not owned by the interpreter";
  return NULL;
}

#define CALLSITE_RUNTIME_REFUSAL bottom_refusal
#define CALLSITE_LAYOUT_NAME "internal-3.15"
#include "layouts/layout_tail.inc.h"
#endif
