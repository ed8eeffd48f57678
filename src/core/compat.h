// core/compat.h — every difference of CPython's public C API between the supported versions,
// behind one name each, so that no file outside this one and src/layouts/ tests
// PY_VERSION_HEX. Frame-layout facts (internal structs) live in src/layouts/.
#pragma once
#include <Python.h>
#include <frameobject.h>

#include "callsite/abi.h"
#include "callsite/frame.h"

/// sys.monitoring with C-level callbacks (PEP 669): 3.12+, and only with the GIL (the tracked
/// windows assume it). A macro: the code that uses it calls 3.12-only functions.
#if PY_VERSION_HEX >= 0x030C0000 && !defined(Py_GIL_DISABLED)
#define CALLSITE_HAS_MONITORING 1
#else
#define CALLSITE_HAS_MONITORING 0
#endif

#if PY_VERSION_HEX >= 0x030D0000
// 3.13 moved the declaration to the internal pycore_ceval.h but still exports it (it is how
// PyEval_SetProfileAllThreads sets another thread's function). Same signature 3.9–3.13.
extern "C" PyAPI_FUNC(int) _PyEval_SetProfile(PyThreadState *tstate, Py_tracefunc func,
                                              PyObject *arg);
#endif

namespace callsite::compat {

/// Whether sys.monitoring exists at all (3.12+), free-threaded or not.
inline constexpr bool kHasSysMonitoring = PY_VERSION_HEX >= 0x030C0000;

/// The calling thread's state (nullptr when it has none), without PyThreadState_Get's fatal
/// error: the installed headers' callsite::detail::calling_thread() (callsite/abi.h), which
/// other extensions compile too.
inline PyThreadState *current_tstate() noexcept { return detail::calling_thread(); }

/// Whether the interpreter is finalizing. Reads a runtime flag: safe without a thread state.
/// Public since 3.13 as Py_IsFinalizing; _Py_IsFinalizing before.
inline bool is_finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing();
#else
  return _Py_IsFinalizing();
#endif
}

/// Whether code objects carry column positions (PEP 657, co_positions(): 3.11+). Before,
/// only lines exist: MLIR builds a FileLineColLoc with column 0, FrameSummary has no columns.
inline constexpr bool kHasColumns = PY_VERSION_HEX >= 0x030B0000;

/// Whether traceback.FrameSummary takes the code object (`_code`, 3.14+): extract_stack passes
/// it so that linecache finds the lines of code registered under a pseudo-filename (`python
/// -c`, the REPL).
inline constexpr bool kFrameSummaryTakesCode = PY_VERSION_HEX >= 0x030E0000;

/// Whether inspect.findsource() of a code object starts its block at co_firstlineno (3.13+).
/// Before, it walks back from there to the nearest line that looks like a Python `def`,
/// `lambda` or decorator, and to the file's first line when there is none.
inline constexpr bool kInspectBlockAtFirstLine = PY_VERSION_HEX >= 0x030D0000;

/// Whether inspect.getblock() ends a block that does not start with `def`/`class` at the end
/// of its first logical line (3.14+ BlockFinder: `singleline`). Before, it tokenizes every
/// line after it until the end of the lines.
inline constexpr bool kInspectBlockEndsAtLogicalLine = PY_VERSION_HEX >= 0x030E0000;

/// Whether the thread state is a thread-local of the thread that runs (3.12+). Before 3.12,
/// the "current" thread state is the GIL holder's, which may be another thread's.
inline constexpr bool kThreadLocalTstate = PY_VERSION_HEX >= 0x030C0000;

/// The name MLIR and the traceback module show for a code object: co_qualname (3.11+,
/// cpython/code.h), co_name on 3.10, which has no co_qualname. Borrowed.
inline PyObject *display_name(PyCodeObject *code) noexcept {
#if PY_VERSION_HEX >= 0x030B0000
  return code->co_qualname;
#else
  return code->co_name;
#endif
}

/// The name of a frame's NameLoc in the location MLIR's loc_tracebacks() builds: the
/// qualified name on 3.11+, the plain name on 3.10 (MLIR reads co_qualname only where it
/// exists). Borrowed.
inline PyObject *mlir_frame_name(const FrameInfo &info) noexcept {
  if constexpr (kHasColumns) return info.qualname ? info.qualname : info.name;
  return info.name;
}

/// An instruction offset in bytes, as frame.f_lasti reports it on 3.11+, from the value a
/// frame object stores: bytes on 3.11+ (PyFrame_GetLasti), code units on 3.10
/// (PyFrameObject.f_lasti, cpython/frameobject.h); -1 (before the first instruction) stays -1.
inline int frame_lasti_bytes(PyFrameObject *f) noexcept {
#if PY_VERSION_HEX >= 0x030B0000
  return PyFrame_GetLasti(f);
#else
  return f->f_lasti < 0 ? -1 : f->f_lasti * int(sizeof(_Py_CODEUNIT));
#endif
}

/// A frame object's code object and caller, borrowed: for frames that are running (the
/// profile function's frame and its callers), which keep both alive. 3.10: PyFrameObject is
/// public; 3.11+: the accessors return new references (PyFrame_GetBack creates the caller's
/// frame object if it has none, which its interpreter frame owns from then on).
inline PyCodeObject *running_frame_code(PyFrameObject *f) noexcept {
#if PY_VERSION_HEX >= 0x030B0000
  PyCodeObject *code = PyFrame_GetCode(f);
  Py_DECREF(code);
  return code;
#else
  return f->f_code;
#endif
}
inline PyFrameObject *running_frame_back(PyFrameObject *f) noexcept {
#if PY_VERSION_HEX >= 0x030B0000
  PyFrameObject *back = PyFrame_GetBack(f);
  Py_XDECREF(back);
  return back;
#else
  return f->f_back;
#endif
}

/// The version tag of `type` while it is valid, else 0: a change to the type or a base (an
/// attribute set or deleted, new bases) invalidates it. Before 3.13 PyType_Modified clears
/// Py_TPFLAGS_VALID_VERSION_TAG and may leave the number; from 3.13 the flag is no longer kept
/// and a modified type's tag is 0 until a lookup assigns a new one (Objects/typeobject.c).
inline unsigned int valid_type_version(PyTypeObject *type) noexcept {
#if PY_VERSION_HEX < 0x030D0000
  if (!(type->tp_flags & Py_TPFLAGS_VALID_VERSION_TAG)) return 0;
#endif
  return type->tp_version_tag;
}

/// Marks a tuple allocated by its type's tp_alloc (zeroed) as having no hash computed yet:
/// from 3.14 PyTupleObject caches its hash in ob_hash, -1 until computed
/// (Include/cpython/tupleobject.h; tuple_alloc sets it), so a zero left there would be taken
/// for the hash. Before 3.14 there is no such field.
inline void reset_tuple_hash(PyObject *tuple) noexcept {
#if PY_VERSION_HEX >= 0x030E0000
  reinterpret_cast<PyTupleObject *>(tuple)->ob_hash = -1;
#else
  (void)tuple;
#endif
}

/// The co_extra slots of code objects: PyUnstable_* since 3.12, the same functions with a
/// leading underscore before (same semantics).
inline Py_ssize_t request_code_extra_index(freefunc free) noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  return PyUnstable_Eval_RequestCodeExtraIndex(free);
#else
  return _PyEval_RequestCodeExtraIndex(free);
#endif
}
inline int code_get_extra(PyObject *code, Py_ssize_t index, void **extra) noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  return PyUnstable_Code_GetExtra(code, index, extra);
#else
  return _PyCode_GetExtra(code, index, extra);
#endif
}
inline int code_set_extra(PyObject *code, Py_ssize_t index, void *extra) noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  return PyUnstable_Code_SetExtra(code, index, extra);
#else
  return _PyCode_SetExtra(code, index, extra);
#endif
}

/// The exception being raised, normalized, taken out of the thread state (new reference;
/// nullptr when none). 3.12+: PyErr_GetRaisedException; before, the (type, value, traceback)
/// triple, the traceback moved onto the value.
inline PyObject *take_raised_exception() noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  return PyErr_GetRaisedException();
#else
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  if (!type) return nullptr;
  PyErr_NormalizeException(&type, &value, &tb);
  if (tb && value) PyException_SetTraceback(value, tb);
  Py_XDECREF(type);
  Py_XDECREF(tb);
  return value;
#endif
}

/// Raises `value` again (steals it). Before 3.12 the thread state's (type, value, traceback)
/// triple is what PyTraceBack_Here extends, so the traceback goes back there too.
inline void restore_raised_exception(PyObject *value) noexcept {
#if PY_VERSION_HEX >= 0x030C0000
  PyErr_SetRaisedException(value);
#else
  PyObject *tb = PyException_GetTraceback(value);
  PyErr_Restore(Py_NewRef(reinterpret_cast<PyObject *>(Py_TYPE(value))), value, tb);
#endif
}

/// getattr(obj, name) with a missing attribute not an error: 1 and a new reference, 0 and
/// nullptr when absent, -1 with an error. Public since 3.13 as PyObject_GetOptionalAttrString;
/// before, an AttributeError is told apart and cleared.
inline int get_optional_attr(PyObject *obj, const char *name, PyObject **result) noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return PyObject_GetOptionalAttrString(obj, name, result);
#else
  *result = PyObject_GetAttrString(obj, name);
  if (*result) return 1;
  if (!PyErr_ExceptionMatches(PyExc_AttributeError)) return -1;
  PyErr_Clear();
  return 0;
#endif
}

}  // namespace callsite::compat
