/* layouts/layout.h — the one interface behind which all per-CPython-version knowledge lives.
 *
 * Plain C: the internal layout files include CPython's internal headers, which are written for
 * C (cpython#115105, #122584), so the boundary between them and the C++ core is a C ABI.
 * Nothing outside src/layouts/ knows a CPython version. */
#ifndef CALLSITE_LAYOUTS_LAYOUT_H
#define CALLSITE_LAYOUTS_LAYOUT_H

#include <Python.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Same layout as callsite::RawFrame (checked by a static_assert in capture/capture.cc). */
typedef struct callsite_raw_frame {
  uintptr_t tagged;
  intptr_t payload;
} callsite_raw_frame;

/* Same layout as callsite::NativeLink. */
typedef struct callsite_native_link {
  const struct callsite_native_link *previous;
  const void *marker;
  const void *executable;
  uintptr_t state;
} callsite_native_link;

typedef struct callsite_walk_request {
  callsite_raw_frame *out; /* receives up to `capacity` entries, innermost first */
  size_t capacity;
  size_t skip;                      /* innermost frames (of both kinds) to drop */
  size_t limit;                     /* at most this many entries (SIZE_MAX: all) */
  const callsite_native_link *native;  /* this thread's innermost native frame, or NULL */
  int owned; /* nonzero: take a reference to every code object written (not to executables) */
  /* A kernel boundary: the walk ends after emitting the innermost frame running this code
   * object (NULL: no boundary). Frames below it are not visited, so a bounded walk costs the
   * frames above the boundary whatever the depth of the program under it. */
  const PyCodeObject *stop;
} callsite_walk_request;

/* What `walk` stores in *complete: the buffer filled before the stack ended, the stack (or
 * the limit) ended, or the walk ended at req->stop (the last entry written is that frame,
 * or nothing was written when it was among the skipped ones). */
enum {
  CALLSITE_WALK_TRUNCATED = 0,
  CALLSITE_WALK_COMPLETE = 1,
  CALLSITE_WALK_AT_STOP = 2
};

typedef struct callsite_layout {
  const char *name;               /* "internal-3.12", "public-api" */
  unsigned long compiled_for_hex; /* PY_VERSION_HEX of the headers it was compiled against */
  /* Walks the stack of `tstate` (GIL held) into req->out, increfing the code objects written
   * when req->owned. Returns the number of entries written; sets *complete to
   * CALLSITE_WALK_TRUNCATED when the buffer filled before the stack (or the limit, or the stop
   * frame) ended: the caller must retry with more room (after releasing what it owns). */
  size_t (*walk)(PyThreadState *tstate, const callsite_walk_request *req, int *complete);
  /* The marker of the frame currently executing on `tstate` (for native frame interleaving);
   * NULL when no Python frame runs. Must be cheap: it runs on every native frame push. */
  const void *(*current_marker)(PyThreadState *tstate);
} callsite_layout;

/* The public C API walk (PyThreadState_GetFrame / PyFrame_GetBack); always available. */
extern const callsite_layout callsite_layout_public;

/* The internal layout compiled for this build, or NULL when there is none (see CMakeLists). */
const callsite_layout *callsite_layout_internal(void);

/* The marker an internal walk would report for a frame object (its _PyInterpreterFrame on
 * 3.11+, the frame object itself on 3.10 and in public-only builds). Lets the public walk
 * interleave native frames pushed while the internal layout was active. */
const void *callsite_marker_of_frame_object(PyFrameObject *frame);

/* Gives a frame object that never ran (PyFrame_New's, for a traceback entry) the line its
 * f_lineno reports, as the eval loop's frames have (3.11+; nothing on 3.10 and without a usable
 * internal layout, where f_lineno stays what CPython computes). */
void callsite_set_frame_object_line(PyFrameObject *frame, int line);

/* Checks that the internal layout may run in this interpreter: same minor version as its
 * headers, and (3.13+) the field offsets CPython publishes in _Py_DebugOffsets agree with the
 * compiled ones. Returns NULL when usable, else a static string saying why not. */
const char *callsite_layout_internal_refusal(void);

/* The same _Py_DebugOffsets comparison the refusal makes, against an image of some
 * interpreter's _PyRuntime.debug_offsets (`size` bytes) instead of the running one's: lets a
 * test show that a build refuses another version's offsets. NULL when they agree; a reason
 * when they don't or when this build's layout has no debug offsets to compare (before 3.13,
 * or no layout). */
const char *callsite_layout_debug_offsets_refusal(const void *image, size_t size);

#ifdef __cplusplus
}
#endif
#endif
