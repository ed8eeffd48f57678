/* layouts/walker.inc.h — the stack walker, written once, instantiated by each layout file.
 *
 * A layout file defines, then includes this file:
 *   LOCUS_FRAME_T                 the frame type the thread state chains
 *   LOCUS_FIRST_FRAME(tstate)     innermost frame (LOCUS_FRAME_T*) or NULL
 *   LOCUS_PREVIOUS(f)             the next outer frame
 *   LOCUS_VISIBLE_CODE(f)         the frame's PyCodeObject* if CPython itself would show the
 *                                 frame (traceback, sys._getframe), else NULL
 *   LOCUS_LASTI_BYTES(f, code)    instruction offset in bytes as `frame.f_lasti` reports it
 *   LOCUS_WALK_NAME               the name of the function to define
 * Native frames are interleaved by marker: a native frame pushed while frame `f` was current
 * was called by `f`, so it is emitted just before `f` (innermost first). The marker is checked
 * before visibility so a native frame pushed under a shim/incomplete frame is not lost; native
 * frames whose marker is not on the chain (pushed with no Python frame) come last. */

static size_t LOCUS_WALK_NAME(PyThreadState *tstate, const locus_walk_request *req,
                              int *complete) {
  locus_raw_frame *out = req->out;
  size_t n = 0, skip = req->skip;
  const size_t capacity = req->capacity, limit = req->limit;
  const locus_native_link *native = req->native;
  *complete = 1;
  if (limit == 0) return 0;

#define LOCUS_EMIT(TAG, PAYLOAD)             \
  do {                                       \
    if (skip) {                              \
      --skip;                                \
    } else {                                 \
      if (n == capacity) {                   \
        *complete = 0;                       \
        return n;                            \
      }                                      \
      out[n].tagged = (uintptr_t)(TAG);      \
      out[n].payload = (intptr_t)(PAYLOAD);  \
      if (++n == limit) return n;            \
    }                                        \
  } while (0)

  for (LOCUS_FRAME_T *f = LOCUS_FIRST_FRAME(tstate); f; f = LOCUS_PREVIOUS(f)) {
    while (native && native->python_frame == (const void *)f) {
      LOCUS_EMIT((uintptr_t)native->executable | 1u, native->state);
      native = native->previous;
    }
    PyCodeObject *code = LOCUS_VISIBLE_CODE(f);
    if (code) LOCUS_EMIT(code, LOCUS_LASTI_BYTES(f, code));
  }
  for (; native; native = native->previous)
    LOCUS_EMIT((uintptr_t)native->executable | 1u, native->state);
#undef LOCUS_EMIT
  return n;
}
