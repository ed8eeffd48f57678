/* layouts/select.c — which layout this build has, and whether the running interpreter may
 * use it. The only place that compares the compile-time and run-time CPython versions. */
#include <Python.h>
#include <stdio.h>

#include "layouts/layout.h"

#if CALLSITE_HAVE_LAYOUT
extern const callsite_layout callsite_layout_compiled;
const void *callsite_layout_internal_marker_of(PyFrameObject *frame);
const char *callsite_layout_internal_version_refusal(void);

const callsite_layout *callsite_layout_internal(void) { return &callsite_layout_compiled; }
const void *callsite_marker_of_frame_object(PyFrameObject *frame) {
  return callsite_layout_internal_marker_of(frame);
}
#else
const callsite_layout *callsite_layout_internal(void) { return NULL; }
/* Public-only builds: the public walk's own marker is the frame object. */
const void *callsite_marker_of_frame_object(PyFrameObject *frame) { return frame; }
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
  return "this build has no internal frame layout (untested CPython version or free-threaded)";
#else
  if (running_minor() != PY_MINOR_VERSION)
    return "module compiled for another CPython minor version than the one running it";
  return callsite_layout_internal_version_refusal();
#endif
}
