/* layouts/visible_frame.h — native frames as real interpreter frames: the per-version part.
 *
 * A visible native frame is a _PyInterpreterFrame linked on the thread's frame chain around a
 * nested call made from C, running a synthetic code object whose instruction k after RESUME
 * (and its inline cache, 3.15) carries the
 * location of state k (native/visible_code.cc builds it). Every reader of the chain (the
 * frame objects of sys._getframe and tracebacks, faulthandler, py-spy) then shows it. Plain C
 * for the same reason as layout.h. Frame memory is a block the caller provides, off the C
 * stack: greenlet's Greenlet::expose_frames (3.12+) writes through every complete frame of a
 * suspended greenlet's chain that it does not find on the C stack (the thread's data stack,
 * where CPython keeps its frames, or the heap). */
#ifndef CALLSITE_LAYOUTS_VISIBLE_FRAME_H
#define CALLSITE_LAYOUTS_VISIBLE_FRAME_H

#include <Python.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* co_flags bit of a synthetic code object: the walker's cheap first test for the Python view
 * of a visible frame (its native entry comes from the shadow stack). Outside PyCF_MASK, so
 * PyEval_MergeCompilerFlags never passes it on, and unused by CPython 3.10-3.15. Anyone can
 * set it (code.replace(co_flags=...)), so the walker confirms by identity:
 * callsite_is_synthetic_code(). */
#define CALLSITE_CO_VISIBLE_NATIVE 0x40000000

/* co_flags bit of the synthetic code of an executable with a locals reifier (set when the
 * code is built): its frames hold a FrameLocals in f_locals from the push. Outside PyCF_MASK
 * and unused by CPython 3.10-3.15, as the bit above. */
#define CALLSITE_CO_NATIVE_LOCALS 0x20000000

/* The co_consts tuple of every synthetic code object, made once by native/visible_code.cc
 * (NULL before): its identity is the mark, a pointer compare. No code object compiled or
 * built by anyone else holds that very tuple (code.replace() keeps it only in copies of
 * callsite's own code, which run their `return None` body, never a call). */
extern const void *callsite_synthetic_consts;

/* Nonzero when `code` is one of callsite's synthetic code objects (tested after the co_flags
 * bit, so only code carrying it pays the load). */
static inline int callsite_is_synthetic_code(const PyCodeObject *code) {
  return (const void *)code->co_consts == callsite_synthetic_consts;
}

typedef struct callsite_visible_ops {
  const char *name;         /* "visible-3.12" */
  size_t frame_size;        /* bytes of one frame (specials + the synthetic code's slots) */
  size_t code_units_offset; /* offsetof(PyCodeObject, co_code_adaptive) */
  int resume_opcode, nop_opcode;
  int resume_caches;        /* inline cache units after RESUME, which CPython writes to */
  int load_const_opcode, return_value_opcode; /* the body run by exec(): return None */
} callsite_visible_ops;

/* The frame operations of the compiled implementation (visible_frame.inc.h), called directly
 * so that the push and pop inline into their callers; only once callsite_visible_frames()
 * accepted the running interpreter, and only in builds with CALLSITE_HAVE_VISIBLE.
 *
 * push: fills `frame` (frame_size bytes, off the C stack) as a frame of `code` (the
 * executable keeps it alive while the frame is linked) at instruction `ip`, running as
 * `function` (a function object: the frame's f_funcobj, and its globals and builtins are the
 * frame's; the executable keeps it alive too), then makes it the current frame of `tstate`,
 * attached on the calling thread. Calls nothing. Returns the address of the frame's
 * instruction pointer (set_state writes there); *previous receives the frame that was current
 * before, which is what the internal layouts report as the current marker.
 * is_current: nonzero when `frame` is the current frame of `tstate` (pop's precondition).
 * pop: unlinks `frame` (the current frame) and either hands it to the frame object a tool
 * made for it and still holds (as CPython's take-over does) or releases what the frame owns.
 * The memory may be reused afterwards. GIL held; the pending exception is kept.
 * Hidden: a call within the module needs no PLT, and LTO may inline it. */
#define CALLSITE_VF_HIDDEN __attribute__((visibility("hidden")))
CALLSITE_VF_HIDDEN const void **callsite_visible_push(PyThreadState *tstate, void *frame,
                                                      PyObject *code, PyObject *function,
                                                      const void *ip, const void **previous);
CALLSITE_VF_HIDDEN int callsite_visible_is_current(PyThreadState *tstate, const void *frame);
CALLSITE_VF_HIDDEN void callsite_visible_pop(PyThreadState *tstate, void *frame);
/* set_code: makes the pushed `frame` run `code` (another shard of the same executable, kept
 * alive by it) at instruction `ip`. A reader that does not hold the GIL (faulthandler's
 * signal handler or watchdog thread) may see the new code with the old position between the
 * two stores: an offset outside the code, for which CPython's line lookup gives no line or
 * the code's first line, never a read out of bounds. */
CALLSITE_VF_HIDDEN void callsite_visible_set_code(void *frame, PyObject *code, const void *ip);
/* moved: `frame` (pushed by `tstate`) now shows another location while a frame above it runs
 * (its state set from a callee). 3.15: a remote profiler caching frames re-reads only the
 * frames above its anchor (tstate->last_profiled_frame); when the anchor is above `frame`, it
 * is moved down to `frame` (with a new sequence number, as CPython does when it pops the
 * anchor), so the next sample reads the new location. Elsewhere nothing to do. */
CALLSITE_VF_HIDDEN void callsite_visible_moved(PyThreadState *tstate, const void *frame);
/* Frame memory on the thread's data stack, where CPython keeps its own frames (greenlet
 * saves it per greenlet; 3.15's sampler reads it in one snapshot), as the fast path of
 * _PyThreadState_PushFrame: `header_bytes` followed by a frame, or NULL when the current
 * chunk has no room (the caller then uses the heap). give: releases the block, which must
 * be the top of the stack (the frames pushed after it popped): 1, or 0 (nothing touched)
 * when it is not the top. */
CALLSITE_VF_HIDDEN void *callsite_visible_stack_take(PyThreadState *tstate, size_t header_bytes);
CALLSITE_VF_HIDDEN int callsite_visible_stack_give(PyThreadState *tstate, void *block,
                                                   size_t header_bytes);
/* pop for a current frame that holds nothing (no frame object, no f_locals): 1 when done,
 * 0 (nothing touched) when the full pop is needed. */
CALLSITE_VF_HIDDEN int callsite_visible_pop_quick(PyThreadState *tstate, void *frame);

/* The variables a pushed `frame` shows: locals_of returns what it holds in f_locals
 * (borrowed, NULL: nothing), which CPython's frame.f_locals returns as is for the synthetic
 * code (not CO_OPTIMIZED; 3.12 merges its zero fast locals into it); set_locals stores a
 * new reference there (the frame must hold none); kept: nonzero when a frame object made for
 * it is held by someone else, so the pop will hand the frame over to it. */
CALLSITE_VF_HIDDEN PyObject *callsite_visible_locals_of(const void *frame);
CALLSITE_VF_HIDDEN void callsite_visible_set_locals(void *frame, PyObject *mapping);
CALLSITE_VF_HIDDEN int callsite_visible_kept(const void *frame);

/* frame_object: the frame object CPython made for a pushed `frame` (borrowed), or NULL.
 * give_code: after the pop handed the frame to `frame_object`, which owns it from then on and
 * never runs it, makes the frame run `code` instead, a copy of its code with the same
 * instructions and lines (native/visible_code.h, post_mortem_code), at the same instruction;
 * nothing when the frame object does not own its frame. GIL held. */
CALLSITE_VF_HIDDEN PyFrameObject *callsite_visible_frame_object(const void *frame);
CALLSITE_VF_HIDDEN void callsite_visible_give_code(PyFrameObject *frame_object, PyObject *code);

/* The implementation for the running interpreter, or NULL when this build has none or the
 * internal layout is refused (then native frames stay on the shadow stack only). */
const callsite_visible_ops *callsite_visible_frames(void);

/* The capture backend refused the internal walk (`why`, a static string) for a reason the
 * layout's own check does not see (its start-up self-check, a test build's forced refusal):
 * visible frames rely on the same layouts, so they are refused too. Called once at import,
 * before any frame is pushed. */
void callsite_visible_frames_refuse(const char *why);
const char *callsite_visible_frames_backend_refusal(void); /* NULL unless refused so */

#ifdef __cplusplus
}
#endif
#endif
