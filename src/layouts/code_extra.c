/* layouts/code_extra.c — the direct co_extra read's switch and its start-up self-check. */
#include "layouts/code_extra.h"

static int public_get(PyObject *code, Py_ssize_t index, void **out) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyUnstable_Code_GetExtra(code, index, out);
#else
  return _PyCode_GetExtra(code, index, out);
#endif
}

static int public_set(PyObject *code, Py_ssize_t index, void *value) {
#if PY_VERSION_HEX >= 0x030C0000
  return PyUnstable_Code_SetExtra(code, index, value);
#else
  return _PyCode_SetExtra(code, index, value);
#endif
}

/* Both reads of slots 0..index+1 agree (slots past the holder read as NULL either way). */
static int reads_agree(PyCodeObject *code, Py_ssize_t index) {
  for (Py_ssize_t i = 0; i <= index + 1; ++i) {
    void *expected = NULL;
    if (public_get((PyObject *)code, i, &expected) < 0) return 0;
    if (callsite_code_extra_read(code, i) != expected) return 0;
  }
  return 1;
}

const char *callsite_code_extra_self_check(Py_ssize_t index, void *probe, int *owned) {
  *owned = 0;
#if !CALLSITE_HAVE_LAYOUT
  (void)index;
  (void)probe;
  (void)reads_agree;
  return "this build compiles no internal layout";
#elif defined(Py_GIL_DISABLED)
  (void)index;
  (void)probe;
  (void)reads_agree;
  return "a free-threaded build replaces co_extra under a lock";
#else
  if (index < 0) return "no co_extra index";
  PyCodeObject *code = PyCode_NewEmpty("<callsite>", "code_extra_self_check", 1);
  if (!code) {
    PyErr_Clear();
    return "no code object to check with";
  }
  const char *why = NULL;
  if (!reads_agree(code, index)) {
    why = "an empty co_extra reads differently";
  } else if (public_set((PyObject *)code, index, probe) < 0) {
    why = "co_extra could not be set";
  } else {
    *owned = 1;
    if (!reads_agree(code, index) || callsite_code_extra_read(code, index) != probe)
      why = "co_extra's holder is laid out differently";
  }
  PyErr_Clear();
  Py_DECREF(code);
  return why;
#endif
}
