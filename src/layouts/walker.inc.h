/* layouts/walker.inc.h — the stack walker, written once, instantiated by each layout file.
 *
 * A layout file defines, then includes this file:
 *   LOCUS_FRAME_T                 the frame type the thread state chains
 *   LOCUS_FIRST_FRAME(tstate)     innermost frame (LOCUS_FRAME_T*) or NULL
 *   LOCUS_PREVIOUS(f)             the next outer frame
 *   LOCUS_INSPECT(f, &lasti)      the frame's PyCodeObject* if CPython itself would show the
 *                                 frame (traceback, sys._getframe), else NULL; stores the
 *                                 instruction offset in bytes, as `frame.f_lasti` reports it
 *   LOCUS_WALK_NAME               the name of the function to define
 *
 * Native frames are interleaved by marker: a native frame pushed while frame `f` was current
 * was called by `f`, so it is emitted just before `f` (innermost first). The marker is checked
 * before visibility so a native frame pushed under a shim/incomplete frame is not lost; native
 * frames whose marker is not on the chain (pushed with no Python frame) come last.
 *
 * The hot loop is kept to ~15 instructions per frame (callgrind): one output pointer and one
 * end pointer instead of index, capacity and limit checks; skipped frames walked by a loop of their own;
 * the native check is a single compare against a marker no frame can have when there are
 * none. Code references (req->owned) are taken one refcount write per run of equal code
 * objects (layouts/refcount_runs.h): per-entry increfs on a recursive stack are a chain of
 * dependent writes to one counter that costs more than the walk itself. */

#ifndef LOCUS_WALKER_SHARED
#define LOCUS_WALKER_SHARED
#include "layouts/refcount_runs.h"
/* Never equal to a frame address: frames are pointer-aligned. */
#define LOCUS_NO_MARKER ((const void *)1)

/* Emits the native frames whose marker is `frame` (or all remaining ones when frame is NULL).
 * Returns 1 when the output filled up. Cold: only runs where native frames exist. */
static int locus_emit_natives(const locus_native_link **native, const void **marker,
                              const void *frame, locus_raw_frame **out,
                              locus_raw_frame *end, size_t *skip) {
  const locus_native_link *n = *native;
  int full = 0;
  while (n && (frame == NULL || n->python_frame == frame)) {
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
  *marker = n ? n->python_frame : LOCUS_NO_MARKER;
  return full || *out == end;
}
#endif

#define LOCUS_CAT2(a, b) a##b
#define LOCUS_CAT(a, b) LOCUS_CAT2(a, b)
#define LOCUS_WALK_IMPL LOCUS_CAT(LOCUS_WALK_NAME, _impl)

/* `owned` and `natives` are compile-time constants at the call sites below, so the compiler
 * emits one specialised loop per combination: without native frames on the thread (the
 * common case) the loop has no marker compare at all. */
static inline __attribute__((always_inline)) size_t LOCUS_WALK_IMPL(
    PyThreadState *tstate, const locus_walk_request *req, int *complete, const int owned,
    const int natives) {
  locus_raw_frame *const begin = req->out;
  locus_raw_frame *out = begin;
  const size_t want = req->limit < req->capacity ? req->limit : req->capacity;
  locus_raw_frame *const end = begin + want;
  size_t skip = req->skip;
  const locus_native_link *native = req->native;
  const void *marker = native ? native->python_frame : LOCUS_NO_MARKER;
  LOCUS_FRAME_T *f = LOCUS_FIRST_FRAME(tstate);
  /* The code object of the current run of equal ones and its length: its references are
   * added in one write when the run ends (layouts/refcount_runs.h). */
  PyCodeObject *run_code = NULL;
  Py_ssize_t run = 0;
  *complete = 1;
  if (out == end) goto filled;

  /* Skipped frames first, in their own loop, so the emitting loop tests no skip count. */
  while (skip && f) {
    if (natives && (const void *)f == marker &&
        locus_emit_natives(&native, &marker, f, &out, end, &skip))
      goto filled;
    if (!skip) break; /* native frames took the rest of the skip; f is still to be emitted */
    intptr_t unused;
    if (LOCUS_INSPECT(f, &unused)) --skip;
    f = LOCUS_PREVIOUS(f);
  }

  for (; f; f = LOCUS_PREVIOUS(f)) {
    if (natives && (const void *)f == marker &&
        locus_emit_natives(&native, &marker, f, &out, end, &skip))
      goto filled;
    intptr_t lasti;
    PyCodeObject *code = LOCUS_INSPECT(f, &lasti);
    if (!code) continue;
    out->payload = lasti;
    out->tagged = (uintptr_t)code;
    if (owned) {
      if (code != run_code) {
        if (run_code) locus_incref_n((PyObject *)run_code, run);
        run_code = code;
        run = 0;
      }
      ++run;
    }
    if (++out == end) {
      f = LOCUS_PREVIOUS(f);
      goto filled;
    }
  }
  if (owned && run_code) locus_incref_n((PyObject *)run_code, run);
  if (native) {
    run_code = NULL; /* flushed */
    locus_emit_natives(&native, &marker, NULL, &out, end, &skip);
    goto filled;
  }
  return (size_t)(out - begin);

filled:
  if (owned && run_code) locus_incref_n((PyObject *)run_code, run);
  /* The output is full. That is the end when the limit was the bound; otherwise the walk is
   * complete only if nothing that would be emitted remains. */
  if (want < req->limit) {
    if (native) *complete = 0;
    for (; f && *complete; f = LOCUS_PREVIOUS(f)) {
      intptr_t unused;
      if (LOCUS_INSPECT(f, &unused)) *complete = 0;
    }
  }
  return (size_t)(out - begin);
}

static size_t LOCUS_WALK_NAME(PyThreadState *tstate, const locus_walk_request *req,
                              int *complete) {
  if (req->native)
    return req->owned ? LOCUS_WALK_IMPL(tstate, req, complete, 1, 1)
                      : LOCUS_WALK_IMPL(tstate, req, complete, 0, 1);
  return req->owned ? LOCUS_WALK_IMPL(tstate, req, complete, 1, 0)
                    : LOCUS_WALK_IMPL(tstate, req, complete, 0, 0);
}
#undef LOCUS_WALK_IMPL
