/* layouts/visible_frame.inc.h — push/pop of a visible native frame, written once and
 * instantiated by visible_frame_3XX.c (as walker.inc.h is by the layout files).
 *
 * A file defines, after including CPython's internal frame headers, then includes this one:
 *   CALLSITE_VF_CURRENT(tstate)   lvalue: the thread's current _PyInterpreterFrame*
 *   CALLSITE_VF_IP_FIELD          prev_instr (3.12) or instr_ptr (3.13+)
 *   CALLSITE_VF_CODE_FIELD        f_code (3.12) or f_executable (3.13), PyObject-like fields
 *   CALLSITE_VF_STACKREFS         1 on 3.14+: f_executable/f_funcobj are _PyStackRefs, the
 *                                 stack is `stackpointer`, the GC reads `visited`
 *   CALLSITE_VF_EXPORTED_CLEAR    1 on 3.15: pop goes through CPython's exported
 *                                 _PyFrame_ClearExceptCode (with a strong code reference)
 *                                 when a tool looked at the frame; the remote profiler's
 *                                 anchor is moved on pop
 *   CALLSITE_VF_RESUME_CACHES     inline cache units after RESUME: 0, 1 on 3.15 (its
 *                                 _PyOpcode_Caches[RESUME]); a state's instruction must not
 *                                 be one, or instrumentation (settrace, sys.monitoring) finds
 *                                 no line there
 *   CALLSITE_VF_NAME              "visible-3.X"
 *
 * Field values (what every reader needs; CPython 3.12-3.15 _PyInterpreterFrame):
 *   - code: the synthetic code object, borrowed (the executable owns it; 3.15 makes it
 *     strong for the exported clear only, see pop); instruction pointer at or past its first
 *     instruction, a RESUME (_co_firsttraceable == 0), so _PyFrame_IsIncomplete is false and
 *     every reader shows it;
 *   - f_funcobj: the guest function of the executable's file (native/guest_module.h),
 *     borrowed (the executable holds it; a take-over makes the copy's reference strong);
 *     f_globals/f_builtins: its globals and builtins, borrowed (it holds them): linecache,
 *     warnings, PyEval_GetGlobals and sys._getframemodulename read them, and 3.13.15+
 *     faulthandler stops its dump at a frame whose globals or builtins are NULL;
 *   - 3.14+: references built with CPython's stack-reference helpers, so a borrowed one is
 *     tagged as borrowed (PyStackRef_CLOSE never decrefs it; _PyFrame_Copy makes it strong);
 *   - owner FRAME_OWNED_BY_THREAD: the only owner every reader accepts and shows;
 *   - empty value stack: nothing for a frame object, the GC or a take-over to visit. */
#include <string.h>

#ifndef CALLSITE_VF_STACKREFS
#define CALLSITE_VF_STACKREFS 0
#endif
#ifndef CALLSITE_VF_EXPORTED_CLEAR
#define CALLSITE_VF_EXPORTED_CLEAR 0
#endif
#ifndef CALLSITE_VF_RESUME_CACHES
#define CALLSITE_VF_RESUME_CACHES 0
#endif
/* Each macro this file needs, named when missing (the layout file's list above). */
#ifndef CALLSITE_VF_CURRENT
#error "layouts/visible_frame.inc.h needs CALLSITE_VF_CURRENT defined before it is included"
#endif
#ifndef CALLSITE_VF_IP_FIELD
#error "layouts/visible_frame.inc.h needs CALLSITE_VF_IP_FIELD defined before it is included"
#endif
#ifndef CALLSITE_VF_NAME
#error "layouts/visible_frame.inc.h needs CALLSITE_VF_NAME defined before it is included"
#endif
#if !CALLSITE_VF_STACKREFS && !defined(CALLSITE_VF_CODE_FIELD)
#error "layouts/visible_frame.inc.h needs CALLSITE_VF_CODE_FIELD defined before it is included (or CALLSITE_VF_STACKREFS 1)"
#endif

/* Fills `f` as a frame of `code` at `ip` running as `function`, below the current frame,
 * and publishes it. */
const void **callsite_visible_push(PyThreadState *tstate, void *frame, PyObject *code,
                                   PyObject *function, const void *ip, const void **previous) {
  _PyInterpreterFrame *f = (_PyInterpreterFrame *)frame;
  _PyInterpreterFrame *prev = CALLSITE_VF_CURRENT(tstate);
  *previous = prev;
#if CALLSITE_VF_STACKREFS
  f->f_executable = PyStackRef_FromPyObjectBorrow(code);
  f->f_funcobj = PyStackRef_FromPyObjectBorrow(function);
  f->stackpointer = f->localsplus;
  f->visited = 0;
#ifdef Py_DEBUG
  f->lltrace = 0;
#endif
#else
  f->CALLSITE_VF_CODE_FIELD = (void *)code;
  f->f_funcobj = function;
  f->stacktop = 0;
#endif
  f->previous = prev;
  f->f_globals = ((PyFunctionObject *)function)->func_globals;
  f->f_builtins = ((PyFunctionObject *)function)->func_builtins;
  f->f_locals = NULL;
  f->frame_obj = NULL;
  f->CALLSITE_VF_IP_FIELD = (_Py_CODEUNIT *)ip;
  f->return_offset = 0;
  f->owner = FRAME_OWNED_BY_THREAD;
  /* faulthandler reads the chain from a signal handler on this thread: every field is
   * written before the frame is published. */
  __asm__ __volatile__("" ::: "memory");
  CALLSITE_VF_CURRENT(tstate) = f;
  return (const void **)&f->CALLSITE_VF_IP_FIELD;
}

void callsite_visible_set_code(void *frame, PyObject *code, const void *ip) {
  _PyInterpreterFrame *f = (_PyInterpreterFrame *)frame;
#if CALLSITE_VF_STACKREFS
  f->f_executable = PyStackRef_FromPyObjectBorrow(code);
  f->CALLSITE_VF_IP_FIELD = (_Py_CODEUNIT *)ip;
#else
  f->CALLSITE_VF_CODE_FIELD = (void *)code;
  f->CALLSITE_VF_IP_FIELD = (_Py_CODEUNIT *)ip;
#endif
}

void callsite_visible_moved(PyThreadState *tstate, const void *frame) {
#if CALLSITE_VF_EXPORTED_CLEAR
  _PyInterpreterFrame *anchor = tstate->last_profiled_frame;
  if (!anchor || anchor == (const _PyInterpreterFrame *)frame) return;
  for (_PyInterpreterFrame *f = CALLSITE_VF_CURRENT(tstate); f && f != frame; f = f->previous) {
    if (f == anchor) {
      tstate->last_profiled_frame = (_PyInterpreterFrame *)frame;
      tstate->last_profiled_frame_seq++;
      return;
    }
  }
#else
  (void)tstate;
  (void)frame;
#endif
}

/* The data stack holds header + frame in pointer-sized slots, as CPython's frames are sized
 * in co_framesize slots. */
#define CALLSITE_VF_SLOTS(header_bytes)                                                         \
  (((header_bytes) + offsetof(_PyInterpreterFrame, localsplus) + 2 * sizeof(void *) +          \
    sizeof(PyObject *) - 1) /                                                                   \
   sizeof(PyObject *))

/* _PyThreadState_HasStackSpace's test without its NULL check: a thread with no chunk yet has
 * both top and limit NULL (CPython asserts both or neither), which leaves no room either. */
void *callsite_visible_stack_take(PyThreadState *tstate, size_t header_bytes) {
  PyObject **block = tstate->datastack_top;
  if ((size_t)(tstate->datastack_limit - block) <= CALLSITE_VF_SLOTS(header_bytes)) return NULL;
  tstate->datastack_top = block + CALLSITE_VF_SLOTS(header_bytes);
  return block;
}

int callsite_visible_stack_give(PyThreadState *tstate, void *block, size_t header_bytes) {
  PyObject **base = (PyObject **)block;
  if (tstate->datastack_top != base + CALLSITE_VF_SLOTS(header_bytes)) return 0;
  tstate->datastack_top = base;
  return 1;
}

PyObject *callsite_visible_locals_of(const void *frame) {
  return ((const _PyInterpreterFrame *)frame)->f_locals;
}

void callsite_visible_set_locals(void *frame, PyObject *mapping) {
  ((_PyInterpreterFrame *)frame)->f_locals = mapping;
}

int callsite_visible_kept(const void *frame) {
  PyFrameObject *fo = ((const _PyInterpreterFrame *)frame)->frame_obj;
  return fo && Py_REFCNT(fo) > 1;
}

PyFrameObject *callsite_visible_frame_object(const void *frame) {
  return ((const _PyInterpreterFrame *)frame)->frame_obj;
}

/* The frame a frame object owns (FRAME_OWNED_BY_FRAME_OBJECT, in its _f_frame_data) holds a
 * strong reference to its code (the take-over made it strong); the instruction pointer moves
 * to the same offset in the new code. */
void callsite_visible_give_code(PyFrameObject *frame_object, PyObject *code) {
  _PyInterpreterFrame *f = frame_object->f_frame;
  if (f != (_PyInterpreterFrame *)frame_object->_f_frame_data ||
      f->owner != FRAME_OWNED_BY_FRAME_OBJECT)
    return;
#if CALLSITE_VF_STACKREFS
  PyCodeObject *old = (PyCodeObject *)PyStackRef_AsPyObjectBorrow(f->f_executable);
  const ptrdiff_t at = f->CALLSITE_VF_IP_FIELD - _PyCode_CODE(old);
  _PyStackRef previous = f->f_executable;
  f->f_executable = PyStackRef_FromPyObjectNew(code);
  f->CALLSITE_VF_IP_FIELD = _PyCode_CODE((PyCodeObject *)code) + at;
  PyStackRef_CLOSE(previous);
#else
  PyCodeObject *old = (PyCodeObject *)f->CALLSITE_VF_CODE_FIELD;
  const ptrdiff_t at = f->CALLSITE_VF_IP_FIELD - _PyCode_CODE(old);
  f->CALLSITE_VF_CODE_FIELD = (void *)Py_NewRef(code);
  f->CALLSITE_VF_IP_FIELD = _PyCode_CODE((PyCodeObject *)code) + at;
  Py_DECREF(old);
#endif
}

int callsite_visible_is_current(PyThreadState *tstate, const void *frame) {
  return CALLSITE_VF_CURRENT(tstate) == (const _PyInterpreterFrame *)frame;
}

#if !CALLSITE_VF_EXPORTED_CLEAR
/* CPython's take_ownership (Python/frame.c, 3.12-3.14), rebuilt from exported pieces: the
 * frame moves into the frame object, which then owns its code and function (ours were
 * borrowed) and whatever CPython stored in f_locals; f_back becomes the frame object of the
 * first complete frame below, which PyEval_GetFrame returns once we are unlinked. */
static __attribute__((noinline)) void callsite_vf_take_over(PyFrameObject *fo,
                                                            _PyInterpreterFrame *frame) {
  _PyInterpreterFrame *copy = (_PyInterpreterFrame *)fo->_f_frame_data;
#if CALLSITE_VF_STACKREFS
  /* 3.14's own copy: borrowed code and function references become strong ones. */
  _PyFrame_Copy(frame, copy);
#else
  Py_INCREF(frame->CALLSITE_VF_CODE_FIELD);
  Py_XINCREF(frame->f_funcobj);
  memcpy(copy, frame, offsetof(_PyInterpreterFrame, localsplus));
  copy->previous = NULL;
#endif
  copy->frame_obj = NULL;
  copy->owner = FRAME_OWNED_BY_FRAME_OBJECT;
  fo->f_frame = copy;
  frame->f_locals = NULL; /* moved */
  PyObject *exc = PyErr_GetRaisedException();
  PyFrameObject *back = PyEval_GetFrame(); /* borrowed; NULL: no frame below, or no memory */
  if (!fo->f_back && back) fo->f_back = (PyFrameObject *)Py_NewRef(back);
  PyErr_Clear();
  PyErr_SetRaisedException(exc);
  if (!PyObject_GC_IsTracked((PyObject *)fo)) PyObject_GC_Track(fo);
}
#endif

/* What the frame holds once a tool looked at it: a frame object (taken over when the tool
 * keeps it, as CPython's _PyFrame_ClearExceptCode does) and the f_locals dict CPython may
 * have stored. Kept out of the pop's common path. */
static __attribute__((noinline)) void callsite_vf_release(_PyInterpreterFrame *frame) {
#if CALLSITE_VF_EXPORTED_CLEAR
  /* 3.15: the exported clear takes the frame object over (or drops it) and releases
   * f_locals. Its take-over copies f_executable and then re-adds a reference for this
   * frame, so both must be strong: the borrowed reference becomes a strong one first, and
   * what the clear leaves is released after. */
  PyObject *exc = PyErr_GetRaisedException();
  PyObject *code = PyStackRef_AsPyObjectBorrow(frame->f_executable);
  frame->f_executable = PyStackRef_FromPyObjectNew(code);
  _PyFrame_ClearExceptCode(frame);
  PyStackRef_CLEAR(frame->f_executable);
  PyErr_SetRaisedException(exc);
#else
  PyFrameObject *fo = frame->frame_obj;
  if (fo) {
    frame->frame_obj = NULL;
    if (Py_REFCNT(fo) > 1) callsite_vf_take_over(fo, frame);
    /* Not taken over: frame_dealloc leaves a frame it does not embed alone (GH-106092). */
    Py_DECREF(fo);
  }
  Py_CLEAR(frame->f_locals);
#endif
}

/* Unlink first (GH-99729: clearing may run finalizers that look at the stack). */
void callsite_visible_pop(PyThreadState *tstate, void *block) {
  _PyInterpreterFrame *frame = (_PyInterpreterFrame *)block;
  CALLSITE_VF_CURRENT(tstate) = frame->previous;
  __asm__ __volatile__("" ::: "memory");
#if CALLSITE_VF_EXPORTED_CLEAR
  /* 3.15: a remote profiler caching frames (profiling.sampling) anchors on
   * last_profiled_frame; CPython moves it when it pops that frame, and so must we. */
  _PyThreadState_UpdateLastProfiledFrame(tstate, frame, frame->previous);
#endif
  if (frame->frame_obj || frame->f_locals) callsite_vf_release(frame);
}

/* The pop of a frame no tool looked at, the common case: when `frame` is the current frame
 * and holds no frame object and no f_locals, unlinks it and returns 1; else touches nothing
 * and returns 0 (the caller then takes the checked path above). */
int callsite_visible_pop_quick(PyThreadState *tstate, void *block) {
  _PyInterpreterFrame *frame = (_PyInterpreterFrame *)block;
  if (CALLSITE_VF_CURRENT(tstate) != frame || frame->frame_obj || frame->f_locals) return 0;
  CALLSITE_VF_CURRENT(tstate) = frame->previous;
  __asm__ __volatile__("" ::: "memory");
#if CALLSITE_VF_EXPORTED_CLEAR
  _PyThreadState_UpdateLastProfiledFrame(tstate, frame, frame->previous);
#endif
  return 1;
}

const callsite_visible_ops callsite_visible_ops_compiled = {
    CALLSITE_VF_NAME,
    /* the specials + co_nlocalsplus + co_stacksize slots of the synthetic code (0 + 1) */
    offsetof(_PyInterpreterFrame, localsplus) + 2 * sizeof(void *),
    offsetof(PyCodeObject, co_code_adaptive),
    RESUME,
    NOP,
    CALLSITE_VF_RESUME_CACHES,
    /* no inline caches in 3.12-3.15 (INSTR_FMT_IB / INSTR_FMT_IX) */
    LOAD_CONST,
    RETURN_VALUE,
};
