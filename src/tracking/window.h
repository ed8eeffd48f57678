// tracking/window.h — one thread's window: a fixed circular buffer of call sites, owned by its
// thread state.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

namespace callsite::tracking::detail {

/// One recorded call: caller code object + offset (bytes) of the call instruction, and the
/// callee's code object when the callee is a Python function. Both are owned references.
struct OwnedCallSite {
  PyCodeObject *code;
  PyCodeObject *callee;
  std::intptr_t offset;
};

/// A thread's window. It is a Python object so that the thread state itself can own it: the
/// thread-state dict (monitoring mode) or tstate->c_profileobj (profile mode). CPython clears
/// both in PyThreadState_Clear, with the GIL held, when a thread ends — which is the reliable
/// thread-exit hook (a C++ thread_local destructor runs later, without the GIL, and also for
/// threads whose state was already deleted). Not GC-tracked: it references code objects and
/// the chained profiler's object only.
struct Window {
  PyObject_HEAD
  OwnedCallSite *entries;
  std::uint32_t capacity, head, count;
  PyThreadState *tstate;    ///< the owner thread (valid while the window lives, see above)
  std::uint64_t tstate_id;  ///< PyThreadState_GetID of the owner: tells a reused address apart
  Window *prev, *next;        ///< registry of live windows (GIL-protected)
  bool in_dict;             ///< owned by the thread-state dict (monitoring mode)
  bool retired;             ///< out of the registry, unused, kept a while (retire(), profile.cc)
  // Profile mode: the profile function this window's thread had before ours, called after ours
  // on every event so a profiler installed earlier keeps working (chained_obj is owned).
  Py_tracefunc chained_func;
  PyObject *chained_obj;
};

/// The window type (internal: it lives in tracking because its dealloc is the thread-exit
/// hook above); created once, at module init. False with a Python error.
extern PyTypeObject *window_type;
bool init_window_type() noexcept;

/// A new window of `capacity` entries for `tstate`, registered. New reference or nullptr + error.
Window *new_window(PyThreadState *tstate, std::uint32_t capacity) noexcept;

/// Releases every entry (the window stays registered and usable).
void clear(Window *window) noexcept;

/// Changes the capacity, keeping the most recent entries. False with a Python error.
bool resize(Window *window, std::uint32_t capacity) noexcept;

/// Copies at most `cap` entries, most recent first, after dropping `skip`, taking a reference
/// to each code object (release with release_copies). Returns the number copied.
std::size_t copy_recent(const Window *window, std::size_t skip, OwnedCallSite *out, std::size_t cap) noexcept;
void release_copies(OwnedCallSite *entries, std::size_t n) noexcept;

/// Takes `window` out of the registry for good (its thread no longer uses it; it only waits
/// for its last reference: see profile.cc), emptied first by the caller.
void retire(Window *window) noexcept;

/// The first live window in the registry (iterate with ->next), and how many there are.
Window *first_window() noexcept;
std::size_t window_count() noexcept;

/// Calls `fn(window)` for every live window, each held by a reference for the whole walk:
/// what `fn` releases (code objects) may run Python code that frees windows or adds some (a
/// registry walk through ->next would then read freed memory). False on allocation failure
/// (no Python error is set: callers of teardown paths go on).
template <class Fn>
inline bool for_each_window(Fn &&fn) noexcept {
  PyObject *held = PyList_New(0);
  if (!held) {
    PyErr_Clear();
    return false;
  }
  for (Window *r = first_window(); r; r = r->next)
    if (PyList_Append(held, reinterpret_cast<PyObject *>(r)) < 0) {
      PyErr_Clear();
      Py_DECREF(held);
      return false;
    }
  bool ok = true;
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(held); ++i)
    ok = fn(reinterpret_cast<Window *>(PyList_GET_ITEM(held, i))) && ok;
  Py_DECREF(held);
  return ok;
}

/// The window owned by `tstate` (the one-entry cache, else a registry scan), or nullptr.
Window *find_window(PyThreadState *tstate) noexcept;

/// One-entry cache thread state → window. With the GIL only one thread runs, and threads switch
/// at most every few milliseconds, so this hits on almost every event. Reset when the window dies.
extern PyThreadState *cache_tstate;
extern Window *cache_window;

/// The last dict-owned window that died with its thread state's dict (PyThreadState_Clear sets
/// tstate->dict to NULL before releasing it): (thread state, id). An event on that thread
/// later in the teardown must not create a new dict and window (they would never be freed).
extern PyThreadState *dead_tstate;
extern std::uint64_t dead_tstate_id;


/// Records one call. Allocation-free. The new entry is written before the overwritten one's
/// references are dropped: a dropped code object can run arbitrary code (a weakref callback)
/// that makes calls, which then land in a consistent window.
inline void push(Window *r, PyCodeObject *code, std::intptr_t offset, PyCodeObject *callee) noexcept {
  OwnedCallSite &e = r->entries[r->head];
  PyCodeObject *old_code = e.code, *old_callee = e.callee;
  // Overwriting a slot with the same code object (recursion, loops) needs no refcount change.
  if (old_code != code) Py_INCREF(code);
  if (callee && old_callee != callee) Py_INCREF(callee);
  e.code = code;
  e.callee = callee;
  e.offset = offset;
  if (++r->head == r->capacity) r->head = 0;
  if (r->count < r->capacity) ++r->count;
  if (old_code != code) Py_XDECREF(old_code);
  if (old_callee != callee) Py_XDECREF(old_callee);
}

}  // namespace callsite::tracking::detail
