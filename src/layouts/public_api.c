/* layouts/public_api.c — the fallback walk through CPython's public C API.
 *
 * PyThreadState_GetFrame / PyFrame_GetBack return new references and, on 3.11+, create a
 * PyFrameObject for every frame that has none yet: this is the cost the internal layouts
 * avoid (the README's capture benchmark gives the cost per frame). The result must be the same frames the internal walk sees. */
#include <Python.h>
#include <frameobject.h>

#include "layouts/layout.h"
#include "layouts/visible_frame.h"

/* Instruction offset in bytes, as frame.f_lasti reports it. */
static int lasti_bytes(PyFrameObject *f) {
#if PY_VERSION_HEX >= 0x030B0000
  return PyFrame_GetLasti(f);
#else
  /* 3.10: f_lasti counts code units (cpython/frameobject.h is public there). */
  return f->f_lasti < 0 ? -1 : f->f_lasti * (int)sizeof(_Py_CODEUNIT);
#endif
}

static size_t walk_public(PyThreadState *tstate, const callsite_walk_request *req, int *complete) {
  callsite_raw_frame *out = req->out;
  size_t n = 0, skip = req->skip;
  const callsite_native_link *native = req->native;
  const PyCodeObject *const stop = req->stop;
  *complete = CALLSITE_WALK_COMPLETE;
  if (req->limit == 0) return 0;

#define CALLSITE_EMIT(TAG, PAYLOAD)            \
  do {                                      \
    if (skip) {                             \
      --skip;                               \
    } else if (n == req->capacity) {        \
      *complete = CALLSITE_WALK_TRUNCATED;  \
      goto done;                            \
    } else {                                \
      out[n].tagged = (uintptr_t)(TAG);     \
      out[n].payload = (intptr_t)(PAYLOAD); \
      if (++n == req->limit) goto done;     \
    }                                       \
  } while (0)

  PyFrameObject *f = PyThreadState_GetFrame(tstate); /* new reference or NULL */
  while (f) {
    if (native) {
      const void *marker = callsite_marker_of_frame_object(f);
      while (native && native->marker == marker) {
        CALLSITE_EMIT((uintptr_t)native->executable | 1u, native->state);
        native = native->previous;
      }
    }
    /* PyFrame_GetCode returns a new reference; the frame keeps the code alive meanwhile. */
    PyCodeObject *code = PyFrame_GetCode(f);
    if (req->native && (code->co_flags & CALLSITE_CO_VISIBLE_NATIVE) &&
        callsite_is_synthetic_code(code)) {
      /* a visible native frame: its entry comes from its shadow-stack link above */
      Py_DECREF(code);
      goto next;
    }
    if (skip || n == req->capacity || !req->owned) Py_DECREF(code); /* else: the entry owns it */
    /* One compare per frame: `stop` is NULL without a boundary, and no code is. The boundary
     * frame ends the chain, as the last entry or inside the skipped frames (when the buffer
     * is full instead, CALLSITE_EMIT reports it truncated). */
    if (code == stop && (skip || n < req->capacity)) {
      if (!skip) {
        out[n].tagged = (uintptr_t)code;
        out[n].payload = (intptr_t)lasti_bytes(f);
        ++n;
      }
      *complete = CALLSITE_WALK_AT_STOP;
      goto done;
    }
    CALLSITE_EMIT(code, lasti_bytes(f));
  next:;
    PyFrameObject *back = PyFrame_GetBack(f);
    Py_DECREF(f);
    f = back;
  }
  for (; native; native = native->previous)
    CALLSITE_EMIT((uintptr_t)native->executable | 1u, native->state);
#undef CALLSITE_EMIT
done:
  Py_XDECREF(f);
  return n;
}

static const void *current_marker_public(PyThreadState *tstate) {
  PyFrameObject *f = PyThreadState_GetFrame(tstate);
  if (!f) return NULL;
  const void *marker = callsite_marker_of_frame_object(f);
  /* Borrowed from here on: while it runs, the interpreter frame owns its frame object. */
  Py_DECREF(f);
  return marker;
}

const callsite_layout callsite_layout_public = {"public-api", PY_VERSION_HEX, walk_public,
                                          current_marker_public};
