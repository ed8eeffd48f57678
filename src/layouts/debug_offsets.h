/* layouts/debug_offsets.h — compares a _Py_DebugOffsets image with the compiled layout.
 *
 * CPython 3.13+ publishes, at the start of _PyRuntime, the offsets out-of-process debuggers
 * read (Include/internal/pycore_debug_offsets.h). A layout file lists the ones its walker
 * relies on as facts (where in _Py_DebugOffsets, and the offsetof() its headers give); the
 * check names the first fact the running interpreter contradicts. Plain C with no CPython
 * types, so the comparison is written once for every version that has debug offsets. */
#ifndef CALLSITE_LAYOUTS_DEBUG_OFFSETS_H
#define CALLSITE_LAYOUTS_DEBUG_OFFSETS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct callsite_offset_fact {
  const char *name;  /* the _Py_DebugOffsets field, e.g. "interpreter_frame.owner" */
  size_t at;         /* offsetof(_Py_DebugOffsets, that field) */
  uint64_t expected; /* its value in the headers the layout was compiled against */
} callsite_offset_fact;

typedef struct callsite_offsets_expectation {
  const char *cookie;         /* _Py_Debug_Cookie, 8 bytes */
  size_t version_at;          /* offsetof(_Py_DebugOffsets, version) */
  size_t free_threaded_at;    /* offsetof(_Py_DebugOffsets, free_threaded) */
  size_t image_size;          /* sizeof(_Py_DebugOffsets) */
  unsigned long compiled_hex; /* PY_VERSION_HEX of the headers */
  const callsite_offset_fact *facts;
  size_t n_facts;
} callsite_offsets_expectation;

/* NULL when `image` (size bytes, a copy of some interpreter's _PyRuntime.debug_offsets)
 * agrees with `want`: valid cookie, same major.minor, not free-threaded, every fact equal.
 * Else the reason, in a buffer overwritten by the next call (callers hold the GIL). */
const char *callsite_debug_offsets_refusal(const void *image, size_t size,
                                           const callsite_offsets_expectation *want);

#ifdef __cplusplus
}
#endif
#endif
