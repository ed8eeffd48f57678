/* layouts/visible_select.c — whether this build and the running interpreter have a tested
 * visible-frame implementation (visible_frame_3XX.c): only where the internal layout of the
 * same version is compiled and accepted, since both rely on the same struct layouts. */
#include <Python.h>

#include "layouts/layout.h"
#include "layouts/visible_frame.h"

#if CALLSITE_HAVE_VISIBLE
extern const callsite_visible_ops callsite_visible_ops_compiled;
#endif

static const char *backend_refusal = NULL;

void callsite_visible_frames_refuse(const char *why) { backend_refusal = why; }

const char *callsite_visible_frames_backend_refusal(void) { return backend_refusal; }

const callsite_visible_ops *callsite_visible_frames(void) {
#if CALLSITE_HAVE_VISIBLE
  static int refused = -1;
  if (refused < 0) refused = callsite_layout_internal_refusal() != NULL;
  return refused || backend_refusal ? NULL : &callsite_visible_ops_compiled;
#else
  return NULL;
#endif
}

const void *callsite_synthetic_consts = NULL;
