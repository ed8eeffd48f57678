/* layouts/code_extra.h — reading a code object's co_extra slot without a call.
 *
 * PyUnstable_Code_GetExtra (_PyCode_GetExtra before 3.12) is the public way; the filter asks
 * it for every frame of every capture, where the call and its checks are most of a cached
 * decision's cost. co_extra is a public field of PyCodeObject (cpython/code.h), and what it
 * points to is CPython's private holder, the same in 3.10 to 3.15 (Objects/codeobject.c):
 *
 *     typedef struct { Py_ssize_t ce_size; void *ce_extras[1]; } _PyCodeObjectExtra;
 *
 * The direct read is used only after a start-up self-check saw it agree with the public
 * function on this interpreter, never on free-threaded builds (where co_extra is replaced
 * under a lock and read with acquire semantics), and never in a build that compiles no
 * internal layout (CALLSITE_FORCE_PUBLIC_API). */
#ifndef CALLSITE_LAYOUTS_CODE_EXTRA_H
#define CALLSITE_LAYOUTS_CODE_EXTRA_H

#include <Python.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct callsite_code_extra_holder {
  Py_ssize_t ce_size;
  void *ce_extras[1];
} callsite_code_extra_holder;

/* co_extra[index] of `code` (index >= 0), or NULL when unset: what PyUnstable_Code_GetExtra
 * stores, for a code object the caller has checked. Only after the self-check passed. */
static inline void *callsite_code_extra_read(PyCodeObject *code, Py_ssize_t index) {
  const callsite_code_extra_holder *holder = (const callsite_code_extra_holder *)code->co_extra;
  return holder && index < holder->ce_size ? holder->ce_extras[index] : NULL;
}

/* Why this build never reads co_extra directly, or NULL when it may, once a start-up
 * self-check (symbolize/code_info.cc) has seen the read agree with the public function. */
static inline const char *callsite_code_extra_build_refusal(void) {
#if !CALLSITE_HAVE_LAYOUT
  return "this build compiles no internal layout";
#elif defined(Py_GIL_DISABLED)
  return "a free-threaded build replaces co_extra under a lock";
#else
  return NULL;
#endif
}

#ifdef __cplusplus
}
#endif
#endif
