/* layouts/select.c — which layout this build has, and whether the running interpreter may
 * use it. The only place that compares the compile-time and run-time CPython versions. */
#include <Python.h>
#include <stdio.h>

#include "layouts/layout.h"

/* Free-threaded builds (Py_GIL_DISABLED, 3.13+) lay frames out differently (per-thread
 * bytecode, tlbc_index) and no such interpreter has been tested: their layout files compile
 * to nothing and the build is public-API only. */
#if CALLSITE_HAVE_LAYOUT && defined(Py_GIL_DISABLED)
#undef CALLSITE_HAVE_LAYOUT
#define CALLSITE_HAVE_LAYOUT 0
#define CALLSITE_NO_LAYOUT_REASON "free-threaded CPython build: no tested internal frame layout"
#else
#define CALLSITE_NO_LAYOUT_REASON \
  "this build has no internal frame layout (untested CPython version or free-threaded)"
#endif

#if CALLSITE_HAVE_LAYOUT
extern const callsite_layout callsite_layout_compiled;
const void *callsite_layout_internal_marker_of(PyFrameObject *frame);
void callsite_layout_internal_set_line(PyFrameObject *frame, int line);
const char *callsite_layout_internal_version_refusal(void);
#if PY_VERSION_HEX >= 0x030D0000
const char *callsite_layout_internal_offsets_refusal(const void *image, size_t size);
#endif

const callsite_layout *callsite_layout_internal(void) { return &callsite_layout_compiled; }
const void *callsite_marker_of_frame_object(PyFrameObject *frame) {
  return callsite_layout_internal_marker_of(frame);
}
void callsite_set_frame_object_line(PyFrameObject *frame, int line) {
  if (!callsite_layout_internal_refusal()) callsite_layout_internal_set_line(frame, line);
}
const char *callsite_layout_debug_offsets_refusal(const void *image, size_t size) {
#if PY_VERSION_HEX >= 0x030D0000
  return callsite_layout_internal_offsets_refusal(image, size);
#else
  (void)image, (void)size;
  return "CPython before 3.13 publishes no _Py_DebugOffsets";
#endif
}
#else
const callsite_layout *callsite_layout_internal(void) { return NULL; }
const char *callsite_layout_debug_offsets_refusal(const void *image, size_t size) {
  (void)image, (void)size;
  return CALLSITE_NO_LAYOUT_REASON;
}
/* Public-only builds: the public walk's own marker is the frame object. */
const void *callsite_marker_of_frame_object(PyFrameObject *frame) { return frame; }
void callsite_set_frame_object_line(PyFrameObject *frame, int line) {
  (void)frame;
  (void)line;
}
#endif

/* Running major.minor; Py_GetVersion() starts "3.X.Y ..." on every version we support
 * (Py_Version, the numeric form, exists only from 3.11). */
static int running_minor(void) {
  int major = 0, minor = 0;
  if (sscanf(Py_GetVersion(), "%d.%d", &major, &minor) != 2 || major != 3) return -1;
  return minor;
}

const char *callsite_layout_internal_refusal(void) {
#if !CALLSITE_HAVE_LAYOUT
  return CALLSITE_NO_LAYOUT_REASON;
#else
  if (running_minor() != PY_MINOR_VERSION)
    return "module compiled for another CPython minor version than the one running it";
  return callsite_layout_internal_version_refusal();
#endif
}
