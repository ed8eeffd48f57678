/* layouts/visible_frame.inc.h — push/pop of a visible native frame, written once and
 * instantiated by visible_frame_3XX.c (as walker.inc.h is by the layout files).
 *
 * A file defines, after including CPython's internal frame header, then includes this one:
 *   CALLSITE_VF_CURRENT(tstate)   lvalue: the thread's current _PyInterpreterFrame*
 *   CALLSITE_VF_CODE_FIELD        f_code (3.12) or f_executable (3.13)
 *   CALLSITE_VF_IP_FIELD          prev_instr (3.12) or instr_ptr (3.13)
 *   CALLSITE_VF_NAME              "visible-3.X"
 *
 * Field values (what every reader needs; CPython 3.12/3.13 pycore_frame.h):
 *   - code: the synthetic code object, borrowed (the executable owns it); instruction pointer
 *     at or past its first instruction, a RESUME (_co_firsttraceable == 0), so
 *     _PyFrame_IsIncomplete is false and every reader shows the frame;
 *   - f_funcobj/f_globals/f_builtins: the calling frame's, borrowed (it outlives us, LIFO):
 *     faulthandler, warnings, PyEval_GetGlobals and sys._getframemodulename read them, and
 *     3.13.x faulthandler stops its dump at a frame whose globals or builtins are NULL;
 *   - owner FRAME_OWNED_BY_THREAD: the only owner every reader accepts and shows;
 *   - stacktop 0: nothing for a frame object or take-over to visit. */
#include <string.h>

#define CALLSITE_VF_CAT2(a, b) a##b
#define CALLSITE_VF_CAT(a, b) CALLSITE_VF_CAT2(a, b)
#define CALLSITE_VF(name) CALLSITE_VF_CAT(name, CALLSITE_VF_SUFFIX)

/* Globals and builtins for a frame pushed with no Python frame below it (a thread started
 * from C): __main__'s namespace, as the REPL's frames have. Never NULL (see above). */
static void CALLSITE_VF(fallback_namespaces)(PyObject **globals, PyObject **builtins) {
  PyObject *exc = PyErr_GetRaisedException();
  PyObject *main_module = PyImport_AddModule("__main__"); /* borrowed */
  *builtins = PyEval_GetBuiltins();
  *globals = main_module ? PyModule_GetDict(main_module) : *builtins;
  PyErr_Clear();
  PyErr_SetRaisedException(exc);
}

static void CALLSITE_VF(push)(PyThreadState *tstate, void *block, PyObject *code,
                              const void *ip) {
  _PyInterpreterFrame *f = (_PyInterpreterFrame *)block;
  _PyInterpreterFrame *prev = CALLSITE_VF_CURRENT(tstate);
  _PyInterpreterFrame *caller = _PyFrame_GetFirstComplete(prev);
  memset(f, 0, sizeof(*f));
  f->CALLSITE_VF_CODE_FIELD = (void *)code;
  f->previous = prev;
  if (caller) {
    f->f_funcobj = caller->f_funcobj;
    f->f_globals = caller->f_globals;
    f->f_builtins = caller->f_builtins;
  } else {
    f->f_funcobj = Py_None;
    CALLSITE_VF(fallback_namespaces)(&f->f_globals, &f->f_builtins);
  }
  f->CALLSITE_VF_IP_FIELD = (_Py_CODEUNIT *)ip;
  f->stacktop = 0;
  f->owner = FRAME_OWNED_BY_THREAD;
  /* faulthandler reads the chain from a signal handler on this thread: every field is
   * written before the frame is published. */
  __asm__ __volatile__("" ::: "memory");
  CALLSITE_VF_CURRENT(tstate) = f;
}

static int CALLSITE_VF(is_current)(PyThreadState *tstate, const void *frame) {
  return CALLSITE_VF_CURRENT(tstate) == (const _PyInterpreterFrame *)frame;
}

/* CPython's take_ownership (Python/frame.c, 3.12 and 3.13), rebuilt from exported pieces:
 * the frame moves into the frame object, which then owns its code and function (ours were
 * borrowed) and whatever CPython stored in f_locals; f_back becomes the frame object of the
 * first complete frame below, which PyEval_GetFrame returns once we are unlinked. */
static void CALLSITE_VF(take_over)(PyFrameObject *fo, _PyInterpreterFrame *frame) {
  _PyInterpreterFrame *copy = (_PyInterpreterFrame *)fo->_f_frame_data;
  Py_INCREF(frame->CALLSITE_VF_CODE_FIELD);
  Py_INCREF(frame->f_funcobj);
  memcpy(copy, frame, offsetof(_PyInterpreterFrame, localsplus));
  copy->stacktop = 0;
  copy->frame_obj = NULL;
  copy->owner = FRAME_OWNED_BY_FRAME_OBJECT;
  copy->previous = NULL;
  fo->f_frame = copy;
  frame->f_locals = NULL; /* moved */
  PyObject *exc = PyErr_GetRaisedException();
  PyFrameObject *back = PyEval_GetFrame(); /* borrowed; NULL: no frame below, or no memory */
  if (!fo->f_back && back) fo->f_back = (PyFrameObject *)Py_NewRef(back);
  PyErr_Clear();
  PyErr_SetRaisedException(exc);
  if (!PyObject_GC_IsTracked((PyObject *)fo)) PyObject_GC_Track(fo);
}

/* CPython's _PyFrame_ClearExceptCode for a frame whose code, function and namespaces are
 * borrowed: unlink first (GH-99729: clearing may run finalizers that look at the stack). */
static void CALLSITE_VF(pop)(PyThreadState *tstate, void *block) {
  _PyInterpreterFrame *frame = (_PyInterpreterFrame *)block;
  CALLSITE_VF_CURRENT(tstate) = frame->previous;
  __asm__ __volatile__("" ::: "memory");
  PyFrameObject *fo = frame->frame_obj;
  if (fo) {
    frame->frame_obj = NULL;
    if (Py_REFCNT(fo) > 1) CALLSITE_VF(take_over)(fo, frame);
    /* Not taken over: frame_dealloc leaves a frame it does not embed alone (GH-106092). */
    Py_DECREF(fo);
  }
  Py_CLEAR(frame->f_locals);
}

const callsite_visible_ops callsite_visible_ops_compiled = {
    CALLSITE_VF_NAME,
    /* the specials + co_nlocalsplus + co_stacksize slots of the synthetic code (0 + 1) */
    offsetof(_PyInterpreterFrame, localsplus) + 2 * sizeof(PyObject *),
    offsetof(_PyInterpreterFrame, CALLSITE_VF_IP_FIELD),
    offsetof(PyCodeObject, co_code_adaptive),
    RESUME,
    NOP,
    CALLSITE_VF(push),
    CALLSITE_VF(is_current),
    CALLSITE_VF(pop),
};
