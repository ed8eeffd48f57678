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

/* The co_extra slot marking callsite's synthetic code objects: -1 until the first one is
 * made. The mark is the address of a private static, which no other user of the slot (there
 * is none: the index is callsite's) could store by accident. */
static Py_ssize_t synthetic_index = -1;
static const char synthetic_mark = 0;

int callsite_mark_synthetic_code(PyObject *code) {
#if PY_VERSION_HEX >= 0x030C0000
  if (synthetic_index < 0) {
    synthetic_index = PyUnstable_Eval_RequestCodeExtraIndex(NULL);
    if (synthetic_index < 0) {
      if (!PyErr_Occurred())
        PyErr_SetString(PyExc_RuntimeError, "callsite: no code-object extra slot is left");
      return -1;
    }
  }
  return PyUnstable_Code_SetExtra(code, synthetic_index, (void *)&synthetic_mark);
#else
  (void)code;
  PyErr_SetString(PyExc_RuntimeError, "callsite: visible native frames need CPython 3.12+");
  return -1;
#endif
}

int callsite_is_synthetic_code(PyCodeObject *code) {
#if PY_VERSION_HEX >= 0x030C0000
  void *extra = NULL;
  if (synthetic_index < 0) return 0;
  if (PyUnstable_Code_GetExtra((PyObject *)code, synthetic_index, &extra) < 0) {
    PyErr_Clear();
    return 0;
  }
  return extra == (void *)&synthetic_mark;
#else
  (void)code;
  return 0;
#endif
}
