/* layouts/walker.inc.h — the stack walker, written once, instantiated by each layout file.
 *
 * A layout file defines, then includes this file:
 *   CALLSITE_FRAME_T                 the frame type the thread state chains
 *   CALLSITE_FIRST_FRAME(tstate)     innermost frame (CALLSITE_FRAME_T*) or NULL
 *   CALLSITE_PREVIOUS(f)             the next outer frame
 *   CALLSITE_INSPECT(f, &lasti)      the frame's PyCodeObject* if CPython itself would show the
 *                                 frame (traceback, sys._getframe), else NULL; stores the
 *                                 instruction offset in bytes, as `frame.f_lasti` reports it
 *   CALLSITE_WALK_NAME               the name of the function to define
 *
 * Native frames are interleaved by marker: a native frame pushed while frame `f` was current
 * was called by `f`, so it is emitted just before `f` (innermost first). The marker is checked
 * before visibility so a native frame pushed under a shim/incomplete frame is not lost; native
 * frames whose marker is not on the chain (pushed with no Python frame) come last.
 *
 * The hot loop is kept short (instruction counts: README): one output pointer and one
 * end pointer instead of index, capacity and limit checks; skipped frames walked by a loop of their own;
 * the native check is a single compare against a marker no frame can have when there are
 * none. Code references (req->owned) are taken one refcount write per run of equal code
 * objects (layouts/refcount_runs.h): per-entry increfs on a recursive stack are a chain of
 * dependent writes to one counter that costs more than the walk itself. */

#ifndef CALLSITE_WALKER_SHARED
#define CALLSITE_WALKER_SHARED
#include "layouts/refcount_runs.h"
#include "layouts/visible_frame.h"
/* A visible native frame (layouts/visible_frame.h) is emitted from its shadow-stack link, so
 * its interpreter frame is skipped. Every visible frame has a link, so only the walk with
 * native frames tests the flag, and only code carrying the flag is checked by identity. */
#define CALLSITE_IS_VISIBLE_NATIVE(code) \
  (((code)->co_flags & CALLSITE_CO_VISIBLE_NATIVE) && callsite_is_synthetic_code(code))
/* Never equal to a frame address: frames are pointer-aligned. */
#define CALLSITE_NO_MARKER ((const void *)1)

/* Emits the native frames whose marker is `frame` (or all remaining ones when frame is NULL).
 * Returns 1 when the output filled up. Cold: only runs where native frames exist. */
static int callsite_emit_natives(const callsite_native_link **native, const void **marker,
                              const void *frame, callsite_raw_frame **out,
                              callsite_raw_frame *end, size_t *skip) {
  const callsite_native_link *n = *native;
  int full = 0;
  while (n && (frame == NULL || n->marker == frame)) {
    if (*out == end) {
      full = 1;
      break;
    }
    if (*skip) {
      --*skip;
    } else {
      (*out)->tagged = (uintptr_t)n->executable | 1u;
      (*out)->payload = (intptr_t)n->state;
      ++*out;
    }
    n = n->previous;
  }
  *native = n;
  *marker = n ? n->marker : CALLSITE_NO_MARKER;
  return full || *out == end;
}
#endif

/* Each macro this file needs, named when missing (the layout file's list above). */
#ifndef CALLSITE_FRAME_T
#error "layouts/walker.inc.h needs CALLSITE_FRAME_T defined before it is included"
#endif
#ifndef CALLSITE_FIRST_FRAME
#error "layouts/walker.inc.h needs CALLSITE_FIRST_FRAME defined before it is included"
#endif
#ifndef CALLSITE_PREVIOUS
#error "layouts/walker.inc.h needs CALLSITE_PREVIOUS defined before it is included"
#endif
#ifndef CALLSITE_INSPECT
#error "layouts/walker.inc.h needs CALLSITE_INSPECT defined before it is included"
#endif
#ifndef CALLSITE_WALK_NAME
#error "layouts/walker.inc.h needs CALLSITE_WALK_NAME defined before it is included"
#endif

#define CALLSITE_CAT2(a, b) a##b
#define CALLSITE_CAT(a, b) CALLSITE_CAT2(a, b)
#define CALLSITE_WALK_IMPL CALLSITE_CAT(CALLSITE_WALK_NAME, _impl)

/* `owned`, `natives` and `bounded` are compile-time constants at the call sites below, so the
 * compiler emits one specialised loop per combination: without native frames on the thread
 * and without a kernel boundary (the common case) the loop has no marker or stop compare. */
static inline __attribute__((always_inline)) size_t CALLSITE_WALK_IMPL(
    PyThreadState *tstate, const callsite_walk_request *req, int *complete, const int owned,
    const int natives, const int bounded) {
  callsite_raw_frame *const begin = req->out;
  callsite_raw_frame *out = begin;
  const size_t want = req->limit < req->capacity ? req->limit : req->capacity;
  callsite_raw_frame *const end = begin + want;
  size_t skip = req->skip;
  const callsite_native_link *native = req->native;
  const void *marker = native ? native->marker : CALLSITE_NO_MARKER;
  CALLSITE_FRAME_T *f = CALLSITE_FIRST_FRAME(tstate);
  /* The code object of the current run of equal ones and its length: its references are
   * added in one write when the run ends (layouts/refcount_runs.h). */
  PyCodeObject *run_code = NULL;
  Py_ssize_t run = 0;
  const PyCodeObject *const stop = req->stop;
  *complete = CALLSITE_WALK_COMPLETE;
  if (out == end) goto filled;

  /* Skipped frames first, in their own loop, so the emitting loop tests no skip count. */
  while (skip && f) {
    if (natives && (const void *)f == marker &&
        callsite_emit_natives(&native, &marker, f, &out, end, &skip))
      goto filled;
    if (!skip) break; /* native frames took the rest of the skip; f is still to be emitted */
    intptr_t unused;
    PyCodeObject *seen = CALLSITE_INSPECT(f, &unused);
    if (bounded && seen == stop) { /* the chain ended inside the skipped frames */
      *complete = CALLSITE_WALK_AT_STOP;
      return 0;
    }
    if (seen && !(natives && CALLSITE_IS_VISIBLE_NATIVE(seen))) --skip;
    f = CALLSITE_PREVIOUS(f);
  }

  for (; f; f = CALLSITE_PREVIOUS(f)) {
    if (natives && (const void *)f == marker &&
        callsite_emit_natives(&native, &marker, f, &out, end, &skip))
      goto filled;
    intptr_t lasti;
    PyCodeObject *code = CALLSITE_INSPECT(f, &lasti);
    if (!code || (natives && CALLSITE_IS_VISIBLE_NATIVE(code))) continue;
    out->payload = lasti;
    out->tagged = (uintptr_t)code;
    if (owned) {
      if (code != run_code) {
        if (run_code) callsite_incref_n((PyObject *)run_code, run);
        run_code = code;
        run = 0;
      }
      ++run;
    }
    if (bounded && code == stop) { /* the boundary frame is the last one: nothing below */
      ++out;
      native = NULL;
      *complete = CALLSITE_WALK_AT_STOP;
      break;
    }
    if (++out == end) {
      f = CALLSITE_PREVIOUS(f);
      goto filled;
    }
  }
  if (owned && run_code) callsite_incref_n((PyObject *)run_code, run);
  if (native) {
    run_code = NULL; /* flushed */
    callsite_emit_natives(&native, &marker, NULL, &out, end, &skip);
    goto filled;
  }
  return (size_t)(out - begin);

filled:
  if (owned && run_code) callsite_incref_n((PyObject *)run_code, run);
  /* The output is full. That is the end when the limit was the bound; otherwise the walk is
   * complete only if nothing that would be emitted remains. */
  if (want < req->limit) {
    if (native) *complete = CALLSITE_WALK_TRUNCATED;
    for (; f && *complete; f = CALLSITE_PREVIOUS(f)) {
      intptr_t unused;
      if (CALLSITE_INSPECT(f, &unused)) *complete = CALLSITE_WALK_TRUNCATED;
    }
  }
  return (size_t)(out - begin);
}

static size_t CALLSITE_WALK_NAME(PyThreadState *tstate, const callsite_walk_request *req,
                              int *complete) {
  if (req->stop) {
    if (req->native)
      return req->owned ? CALLSITE_WALK_IMPL(tstate, req, complete, 1, 1, 1)
                        : CALLSITE_WALK_IMPL(tstate, req, complete, 0, 1, 1);
    return req->owned ? CALLSITE_WALK_IMPL(tstate, req, complete, 1, 0, 1)
                      : CALLSITE_WALK_IMPL(tstate, req, complete, 0, 0, 1);
  }
  if (req->native)
    return req->owned ? CALLSITE_WALK_IMPL(tstate, req, complete, 1, 1, 0)
                      : CALLSITE_WALK_IMPL(tstate, req, complete, 0, 1, 0);
  return req->owned ? CALLSITE_WALK_IMPL(tstate, req, complete, 1, 0, 0)
                    : CALLSITE_WALK_IMPL(tstate, req, complete, 0, 0, 0);
}
#undef CALLSITE_WALK_IMPL
