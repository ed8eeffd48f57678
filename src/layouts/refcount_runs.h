/* layouts/refcount_runs.h — take and drop code-object references one *run* at a time.
 *
 * Why: a captured stack often repeats one code object in consecutive entries (recursion,
 * a DSL's builder calling itself, decorators' wrapper frames). Py_INCREF per entry then turns
 * into a chain of read-modify-writes to one refcount, each waiting on the previous store
 * (~5 cycles of store forwarding apiece), which is most of the per-frame cost of a recursive
 * capture. Adding the run length once costs the same as a single Py_INCREF.
 *
 * Plain C and static inline: used by the layout walkers (C) and the Traceback object (C++).
 * Py_REF_DEBUG builds keep CPython's own per-reference accounting (_Py_RefTotal), so they
 * take the references one by one. */
#ifndef CALLSITE_LAYOUTS_REFCOUNT_RUNS_H
#define CALLSITE_LAYOUTS_REFCOUNT_RUNS_H

#include <Python.h>

#include "layouts/layout.h"

/* Immortal objects (PEP 683, 3.12+: statically allocated code objects among them) keep a
 * fixed refcount that must not be written; Py_INCREF/Py_DECREF skip them, and so do we. */
#if PY_VERSION_HEX >= 0x030C0000
#define CALLSITE_IS_IMMORTAL(o) _Py_IsImmortal(o)
#else
#define CALLSITE_IS_IMMORTAL(o) 0
#endif

static inline void callsite_incref_n(PyObject *o, Py_ssize_t n) {
#ifdef Py_REF_DEBUG
  while (n-- > 0) Py_INCREF(o);
#else
  if (!CALLSITE_IS_IMMORTAL(o)) o->ob_refcnt += n;
#endif
}

/* Drops n >= 1 references; the object is deallocated (by Py_DECREF) if they were the last. */
static inline void callsite_decref_n(PyObject *o, Py_ssize_t n) {
#ifdef Py_REF_DEBUG
  while (n-- > 1) Py_DECREF(o);
#else
  /* The caller owns n references, so the count stays >= 1 after dropping n - 1 of them. */
  if (n > 1 && !CALLSITE_IS_IMMORTAL(o)) o->ob_refcnt -= n - 1;
#endif
  Py_DECREF(o);
}

/* The end of the run of entries equal to *p (p < end). */
static inline const callsite_raw_frame *callsite_run_end(const callsite_raw_frame *p,
                                                   const callsite_raw_frame *end) {
  const uintptr_t tagged = p->tagged;
  ++p;
  if (p == end || p->tagged != tagged) return p; /* a run of one: the common non-recursive case */
  ++p;
  /* A longer run (recursion): four entries per test, one branch. */
  while (end - p >= 4 && ((p[0].tagged ^ tagged) | (p[1].tagged ^ tagged) |
                          (p[2].tagged ^ tagged) | (p[3].tagged ^ tagged)) == 0)
    p += 4;
  while (p != end && p->tagged == tagged) ++p;
  return p;
}

/* Takes (adjust > 0) or drops (adjust < 0) one reference per Python entry of frames[0..n),
 * one refcount write per run of equal code objects. Native entries (tagged & 1) are skipped
 * here: their executables are the native subsystem's to retain. */
static inline void callsite_adjust_code_refs(const callsite_raw_frame *frames, size_t n, int adjust) {
  const callsite_raw_frame *p = frames, *const end = frames + n;
  while (p != end) {
    const callsite_raw_frame *run_end = callsite_run_end(p, end);
    if (!(p->tagged & 1u)) {
      PyObject *code = (PyObject *)p->tagged;
      if (adjust > 0)
        callsite_incref_n(code, (Py_ssize_t)(run_end - p));
      else
        callsite_decref_n(code, (Py_ssize_t)(run_end - p));
    }
    p = run_end;
  }
}

#endif
