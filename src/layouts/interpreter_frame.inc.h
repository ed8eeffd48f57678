/* layouts/interpreter_frame.inc.h — the 3.13+ frame access, written once for the layout files
 * of 3.13, 3.14 and 3.15, whose _PyInterpreterFrame differ only in how f_executable is held
 * and which owners mark frames CPython hides.
 *
 * A layout file includes CPython's internal headers, defines, then includes this file:
 *   CALLSITE_EXECUTABLE(f)     the frame's executable as a PyObject* (NULL allowed)
 *   CALLSITE_HIDDEN_OWNER(o)   nonzero for owners whose frames CPython never shows
 *   CALLSITE_WALK_NAME         the name of the walk function to define
 * It gets the walker (walker.inc.h), callsite_layout_internal_marker_of, a current-marker
 * function named CALLSITE_WALK_NAME##_marker, and CALLSITE_WALKER_FACTS, the
 * _Py_DebugOffsets entries that walk reads (the same names in 3.13-3.15). */
/* Each macro this file needs, named when missing (the layout file's list above). */
#ifndef CALLSITE_EXECUTABLE
#error "layouts/interpreter_frame.inc.h needs CALLSITE_EXECUTABLE defined before it is included"
#endif
#ifndef CALLSITE_HIDDEN_OWNER
#error "layouts/interpreter_frame.inc.h needs CALLSITE_HIDDEN_OWNER defined before it is included"
#endif
#ifndef CALLSITE_WALK_NAME
#error "layouts/interpreter_frame.inc.h needs CALLSITE_WALK_NAME defined before it is included"
#endif

#include "layouts/debug_offsets.h"

/* Frames CPython itself shows (tracebacks, sys._getframe): _PyFrame_IsIncomplete's rule,
 * hidden owners first, then a non-generator frame whose instr_ptr has not reached
 * _co_firsttraceable (still in its prologue: COPY_FREE_VARS, MAKE_CELL, ...). f_executable is
 * "code object or None" and may be other objects for future executables, so its type is
 * checked. The offset is the byte distance (code units * sizeof(_Py_CODEUNIT)), as
 * PyFrame_GetLasti reports it; instr_ptr starts at _PyCode_CODE(code) (_PyFrame_Initialize),
 * so it is never negative. Free-threaded builds, where _PyFrame_GetBytecode is per-thread
 * bytecode, never include this file. */
static inline PyCodeObject *callsite_inspect_interpreter_frame(_PyInterpreterFrame *f,
                                                               intptr_t *lasti) {
  if (CALLSITE_HIDDEN_OWNER(f->owner)) return NULL;
  PyObject *executable = CALLSITE_EXECUTABLE(f);
  if (!executable || !PyCode_Check(executable)) return NULL;
  PyCodeObject *code = (PyCodeObject *)executable;
  const intptr_t bytes = (const char *)f->instr_ptr - (const char *)_PyCode_CODE(code);
  /* The offset test first: false for nearly every frame, so the generator test is rare. */
  if (bytes < (intptr_t)code->_co_firsttraceable * (intptr_t)sizeof(_Py_CODEUNIT) &&
      f->owner != FRAME_OWNED_BY_GENERATOR)
    return NULL;
  *lasti = bytes;
  return code;
}

#define CALLSITE_FRAME_T _PyInterpreterFrame
#define CALLSITE_FIRST_FRAME(ts) ((ts)->current_frame)
#define CALLSITE_PREVIOUS(f) ((f)->previous)
#define CALLSITE_INSPECT(f, lasti) callsite_inspect_interpreter_frame(f, lasti)
#include "layouts/walker.inc.h"

static const void *CALLSITE_CAT(CALLSITE_WALK_NAME, _marker)(PyThreadState *tstate) {
  return tstate->current_frame;
}

/* struct _frame (internal/pycore_frame.h, 3.11+) points at its interpreter frame: f_frame. */
const void *callsite_layout_internal_marker_of(PyFrameObject *frame) { return frame->f_frame; }

/* A frame object PyFrame_New made for a traceback entry (it never runs): its line, which
 * PyFrame_GetLineNumber returns when f_lineno is non-zero (struct _frame, 3.11+). */
void callsite_layout_internal_set_line(PyFrameObject *frame, int line) { frame->f_lineno = line; }

#define CALLSITE_FACT(field, value) \
  {#field, offsetof(_Py_DebugOffsets, field), (uint64_t)(value)}
#define CALLSITE_WALKER_FACTS                                                              \
  CALLSITE_FACT(thread_state.current_frame, offsetof(PyThreadState, current_frame)),       \
  CALLSITE_FACT(interpreter_frame.previous, offsetof(_PyInterpreterFrame, previous)),      \
  CALLSITE_FACT(interpreter_frame.executable, offsetof(_PyInterpreterFrame, f_executable)), \
  CALLSITE_FACT(interpreter_frame.instr_ptr, offsetof(_PyInterpreterFrame, instr_ptr)),    \
  CALLSITE_FACT(interpreter_frame.owner, offsetof(_PyInterpreterFrame, owner)),            \
  CALLSITE_FACT(code_object.co_code_adaptive, offsetof(PyCodeObject, co_code_adaptive))
/* A layout's expectation of _PyRuntime.debug_offsets, given its table of facts. */
#define CALLSITE_OFFSETS_EXPECTATION(facts)                                           \
  {_Py_Debug_Cookie, offsetof(_Py_DebugOffsets, version),                             \
   offsetof(_Py_DebugOffsets, free_threaded), sizeof(_Py_DebugOffsets), PY_VERSION_HEX, \
   facts, sizeof facts / sizeof facts[0]}
