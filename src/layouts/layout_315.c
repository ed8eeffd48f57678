/* layouts/layout_315.c — CPython 3.15: the 3.14 frame (same _PyInterpreterFrame offsets), no
 * C-stack shim owner any more, and PyThreadState.base_frame, a sentinel at the bottom of
 * every thread's frame chain.
 *
 * Facts from the 3.15 headers (Debian python3.15-dev 3.15.2):
 * - internal/pycore_interpframe_structs.h: struct _PyInterpreterFrame as in 3.14
 *   (f_executable a _PyStackRef, previous, instr_ptr, owner); enum _frameowner { THREAD = 0,
 *   GENERATOR = 1, FRAME_OBJECT = 2, INTERPRETER = 3 } (FRAME_OWNED_BY_CSTACK is gone).
 * - internal/pycore_stackref.h (GIL build): Py_TAG_BITS 3; PyStackRef_AsPyObjectBorrow
 *   clears Py_TAG_REFCNT.
 * - internal/pycore_interpframe.h: _PyFrame_IsIncomplete as in 3.14 (owner >=
 *   FRAME_OWNED_BY_INTERPRETER, or a non-generator frame before _co_firsttraceable).
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
#define Py_BUILD_CORE 1
#include <internal/pycore_frame.h>
#include <internal/pycore_interpframe.h>
#include <internal/pycore_runtime.h>
#undef Py_BUILD_CORE

#include "layouts/debug_offsets.h"

static inline PyCodeObject *inspect_315(_PyInterpreterFrame *f, intptr_t *lasti) {
  /* Entry frames and the base frame (INTERPRETER): hidden, as _PyFrame_IsIncomplete does. */
  if (f->owner >= FRAME_OWNED_BY_INTERPRETER) return NULL;
  PyObject *executable = (PyObject *)(f->f_executable.bits & ~(uintptr_t)Py_TAG_BITS);
  if (!executable || !PyCode_Check(executable)) return NULL;
  PyCodeObject *code = (PyCodeObject *)executable;
  /* Byte distance, as PyFrame_GetLasti reports it; instr_ptr starts at _PyCode_CODE(code). */
  const intptr_t bytes = (const char *)f->instr_ptr - (const char *)_PyCode_CODE(code);
  if (bytes < (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT) &&
      f->owner != FRAME_OWNED_BY_GENERATOR)
    return NULL;
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) inspect_315(f, lasti)
#define CALLSITE_WALK_NAME walk_315
#include "layouts/walker.inc.h"

static const void *current_marker_315(PyThreadState *tstate) { return tstate->current_frame; }

/* struct _frame (3.15 internal/pycore_frame.h) points at its interpreter frame via f_frame. */
const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

#define FACT(field, value) {#field, offsetof(_Py_DebugOffsets, field), (uint64_t)(value)}
/* Every offset the walker and its start-up check read that CPython publishes
 * (3.15 internal/pycore_debug_offsets.h). */
static const callsite_offset_fact facts_315[] = {
    FACT(thread_state.current_frame, offsetof(PyThreadState, current_frame)),
    FACT(thread_state.base_frame, offsetof(PyThreadState, base_frame)),
    FACT(interpreter_frame.previous, offsetof(_PyInterpreterFrame, previous)),
    FACT(interpreter_frame.executable, offsetof(_PyInterpreterFrame, f_executable)),
    FACT(interpreter_frame.instr_ptr, offsetof(_PyInterpreterFrame, instr_ptr)),
    FACT(interpreter_frame.owner, offsetof(_PyInterpreterFrame, owner)),
    FACT(code_object.co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive)),
};
#undef FACT
static const callsite_offsets_expectation expected_315 = {
    _Py_Debug_Cookie, offsetof(_Py_DebugOffsets, version),
    offsetof(_Py_DebugOffsets, free_threaded), sizeof(_Py_DebugOffsets), PY_VERSION_HEX,
    facts_315, sizeof facts_315 / sizeof facts_315[0]};

const char *callsite_layout_internal_offsets_refusal(const void *image, size_t size) {
  return callsite_debug_offsets_refusal(image, size, &expected_315);
}

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

const char *callsite_layout_internal_version_refusal(void) {
  const char *why = callsite_layout_internal_offsets_refusal(&_PyRuntime.debug_offsets,
                                                             sizeof _PyRuntime.debug_offsets);
  return why ? why : bottom_refusal();
}

const callsite_layout callsite_layout_compiled = {
    "internal-3.15", PY_VERSION_HEX, walk_315, current_marker_315};
#endif
