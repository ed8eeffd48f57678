/* layouts/layout_313.c — CPython 3.13: tstate->current_frame (Include/cpython/pystate.h),
 * _PyInterpreterFrame.f_executable instead of f_code, instr_ptr instead of prev_instr. */
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

#include "layouts/debug_offsets.h"

/* f_executable is "code object or None" (3.13 pycore_frame.h) and may be other objects for
 * future executables, so check the type before treating it as code. Shim frames
 * (FRAME_OWNED_BY_CSTACK) and incomplete frames are hidden as _PyFrame_IsIncomplete does. */
static inline PyCodeObject *inspect_313(_PyInterpreterFrame *f, intptr_t *lasti) {
  if (f->owner == FRAME_OWNED_BY_CSTACK) return NULL;
  PyObject *executable = f->f_executable;
  if (!PyCode_Check(executable)) return NULL;
  PyCodeObject *code = (PyCodeObject *)executable;
  /* Byte distance = code units * sizeof(_Py_CODEUNIT): _PyInterpreterFrame_LASTI in bytes,
   * as PyFrame_GetLasti reports it. The "incomplete" test of _PyFrame_IsIncomplete compares
   * the same distance with _co_firsttraceable; generator frames are never incomplete. */
  const intptr_t bytes = (const char *)f->instr_ptr - (const char *)_PyCode_CODE(code);
  /* The offset test comes first: it is false for nearly every frame, so the owner is read
   * only for the rare frame still in set-up. No clamp to -1 is needed: instr_ptr starts at
   * _PyCode_CODE(code) (3.13 _PyFrame_Initialize), so the distance is never negative. */
  if (bytes < (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT) &&
      f->owner != FRAME_OWNED_BY_GENERATOR)
    return NULL;
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) inspect_313(f, lasti)
#define CALLSITE_WALK_NAME walk_313
#include "layouts/walker.inc.h"

static const void *current_marker_313(PyThreadState *tstate) { return tstate->current_frame; }

const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

#define FACT(field, value) {#field, offsetof(_Py_DebugOffsets, field), (uint64_t)(value)}
/* Every offset the walker reads that CPython publishes (3.13 internal/pycore_runtime.h). */
static const callsite_offset_fact facts_313[] = {
    FACT(thread_state.current_frame, offsetof(PyThreadState, current_frame)),
    FACT(interpreter_frame.previous, offsetof(_PyInterpreterFrame, previous)),
    FACT(interpreter_frame.executable, offsetof(_PyInterpreterFrame, f_executable)),
    FACT(interpreter_frame.instr_ptr, offsetof(_PyInterpreterFrame, instr_ptr)),
    FACT(interpreter_frame.owner, offsetof(_PyInterpreterFrame, owner)),
    FACT(code_object.co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive)),
};
#undef FACT
static const callsite_offsets_expectation expected_313 = {
    _Py_Debug_Cookie, offsetof(_Py_DebugOffsets, version),
    offsetof(_Py_DebugOffsets, free_threaded), sizeof(_Py_DebugOffsets), PY_VERSION_HEX,
    facts_313, sizeof facts_313 / sizeof facts_313[0]};

const char *callsite_layout_internal_offsets_refusal(const void *image, size_t size) {
  return callsite_debug_offsets_refusal(image, size, &expected_313);
}

/* 3.13 publishes the offsets debuggers rely on in _PyRuntime.debug_offsets; refuse when the
 * running interpreter disagrees with the headers this file was compiled against. */
const char *callsite_layout_internal_version_refusal(void) {
  return callsite_layout_internal_offsets_refusal(&_PyRuntime.debug_offsets,
                                                  sizeof _PyRuntime.debug_offsets);
}

const callsite_layout callsite_layout_compiled = {
    "internal-3.13", PY_VERSION_HEX, walk_313, current_marker_313};
#endif
