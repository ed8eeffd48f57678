// tracking/profile.cc — profile mode: a C profile function on every thread, chained, per-thread.
#include "core/compat.h"
#include "tracking/modes.h"

// _PyEval_SetProfile: declared by core/compat.h where CPython's public headers do not.

namespace callsite::tracking::detail::profile {
namespace {

PyObject *thread_hook = nullptr;           // our threading.setprofile() hook (a builtin)
PyObject *previous_thread_hook = nullptr;  // what threading.getprofile() returned before
bool hook_installed = false;               // threading.setprofile(thread_hook) done
// The windows the last stop() took off the thread states, released by the next stop(). CPython
// reads a thread's profile object, then may allocate the frame object it passes (3.11
// call_trace), where a collection can run a finalizer that disables tracking, and still calls
// on_event with the window it read. Holding them one round longer also keeps the release of
// their code objects (which may run any finalizer) out of the walk over the thread states.
PyObject *retired = nullptr;

// Whether the window may take an entry now: reading the frames and the recording filter may
// run Python code (see on_event), which may switch tracking off, emptying the window.
inline bool still_recording(const Window *r) noexcept {
  return active_mode == Mode::profile && r->entries;
}

// The profile function. Its object is the thread's Window (so no lookup on the event path);
// `call` events record (caller's code, caller's offset, callee code), `c_call` events record
// (frame's code, offset, no callee). Then the profiler we displaced on this thread, if any.
int on_event(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg) {
  Window *r = reinterpret_cast<Window *>(obj);
  ++callbacks;
  if (r->retired) return 0;  // see `retired`: the chained profiler is back in its place
  // The interpreter passes its reference to the window borrowed. Reading the caller's frame
  // may allocate its frame object (a collection, finalizers) and the recording filter's rules
  // run Python code: either may disable tracking, which releases the window. Held meanwhile.
  Py_INCREF(obj);
  if (still_recording(r)) {
    if (what == PyTrace_CALL) {
      // The callee's frame; the call site is in its caller (absent for a thread's first frame).
      if (PyFrameObject *back = compat::running_frame_back(frame)) {
        PyCodeObject *code = compat::running_frame_code(back);
        if (record_keeps(code) && still_recording(r)) {
          push(r, code, compat::frame_lasti_bytes(back), compat::running_frame_code(frame));
          ++recorded;
        }
      }
    } else if (what == PyTrace_C_CALL) {
      PyCodeObject *code = compat::running_frame_code(frame);
      if (record_keeps(code) && still_recording(r)) {
        push(r, code, compat::frame_lasti_bytes(frame), nullptr);
        ++recorded;
      }
    }
  }
  if (Py_REFCNT(obj) == 1) {  // tracking let go of it meanwhile (and restored the chained one)
    Py_DECREF(obj);
    return 0;
  }
  Py_DECREF(obj);
  if (!r->chained_func) return 0;
  // The chained profiler may remove us (sys.setprofile(None) from inside it), which frees the
  // window and with it the reference to its own object: hold that object across the call.
  Py_tracefunc func = r->chained_func;
  PyObject *chained = r->chained_obj;
  Py_XINCREF(chained);
  const int rc = func(chained, frame, what, arg);
  Py_XDECREF(chained);
  return rc;
}

// Installs on_event on `tstate`, chaining whatever profile function it has. GIL held.
bool install(PyThreadState *tstate) {
  if (tstate->c_profilefunc == on_event) return true;  // already ours (reconfiguration)
  Window *r = new_window(tstate, window_size);
  if (!r) return false;
  r->chained_func = tstate->c_profilefunc;
  r->chained_obj = Py_XNewRef(tstate->c_profileobj);
  // _PyEval_SetProfile takes its own reference to the window: the thread state owns it from
  // here, and PyThreadState_Clear releases it when the thread ends.
  const int rc = _PyEval_SetProfile(tstate, on_event, reinterpret_cast<PyObject *>(r));
  Py_DECREF(r);
  return rc == 0;
}

int event_code(PyObject *name) {
  static const struct { const char *name; int what; } kEvents[] = {
      {"call", PyTrace_CALL},         {"return", PyTrace_RETURN},
      {"c_call", PyTrace_C_CALL},     {"c_return", PyTrace_C_RETURN},
      {"c_exception", PyTrace_C_EXCEPTION}, {"exception", PyTrace_EXCEPTION}};
  for (const auto &e : kEvents)
    if (PyUnicode_CompareWithASCIIString(name, e.name) == 0) return e.what;
  return -1;
}

// threading.setprofile() hook: threading.Thread runs sys.setprofile(hook) as the thread
// starts, so this builtin is first called as a Python-level profiler on the new thread's
// first event. It replaces itself by the C profile function (after installing the user's own
// threading hook, which ours displaced, so that one is chained), then records that event.
PyObject *thread_start(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 3 || !PyFrame_Check(args[0]) || !PyUnicode_Check(args[1])) {
    PyErr_SetString(PyExc_TypeError, "callsite thread hook expects (frame, event, arg)");
    return nullptr;
  }
  PyThreadState *tstate = compat::current_tstate();
  if (previous_thread_hook && previous_thread_hook != Py_None) {
    PyObject *setprofile = PySys_GetObject("setprofile");  // borrowed
    PyObject *res = setprofile ? PyObject_CallOneArg(setprofile, previous_thread_hook) : nullptr;
    if (!res) return nullptr;
    Py_DECREF(res);
  } else {
    PyEval_SetProfile(nullptr, nullptr);
  }
  if (active_mode != Mode::profile) Py_RETURN_NONE;  // disabled before this thread ran
  if (!install(tstate)) return nullptr;
  const int what = event_code(args[1]);
  if (what >= 0 && tstate->c_profilefunc == on_event &&
      on_event(tstate->c_profileobj, reinterpret_cast<PyFrameObject *>(args[0]), what,
               args[2] == Py_None ? nullptr : args[2]) < 0)
    return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef thread_start_def = {
    "_tracking_thread_start",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(thread_start)), METH_FASTCALL,
    "callsite.tracking's threading.setprofile() hook: installs the C profile function on a new "
    "thread."};

PyObject *threading_call(const char *name, PyObject *arg) {
  PyObject *threading = PyImport_ImportModule("threading");
  if (!threading) return nullptr;
  PyObject *res = arg ? PyObject_CallMethod(threading, name, "O", arg)
                      : PyObject_CallMethod(threading, name, nullptr);
  Py_DECREF(threading);
  return res;
}

}  // namespace

bool available(const char **why_not) noexcept {
#ifdef Py_GIL_DISABLED
  if (why_not) *why_not = "the free-threaded build is not supported (the window assumes the GIL)";
  return false;
#else
  (void)why_not;
  return true;
#endif
}

bool installed_on(PyThreadState *tstate) noexcept { return tstate->c_profilefunc == on_event; }

Window *window_of(PyThreadState *tstate) noexcept {
  if (tstate->c_profilefunc == on_event) {
    Window *r = reinterpret_cast<Window *>(tstate->c_profileobj);
    cache_tstate = tstate;
    cache_window = r;
    return r;
  }
  // A profiler installed after us may chain to us (as we chain to others): the window then
  // lives on in its object and still records. But a profiler that wrote its own function
  // into the thread state and left our window as the profile object (yappi on 3.10/3.11 for
  // threads other than its own) never calls us: that window is stale.
  Window *r = find_window(tstate);
  if (r && reinterpret_cast<PyObject *>(r) == tstate->c_profileobj) return nullptr;
  return r;
}

bool start() {
  if (!thread_hook) {
    thread_hook = PyCFunction_NewEx(&thread_start_def, nullptr, nullptr);
    if (!thread_hook) return false;
  }
  // Threads started from now on (threading.setprofile semantics). Once per enable: a
  // reconfiguration must not run Python code (it would be recorded into the windows).
  if (!hook_installed) {
    PyObject *prev = threading_call("getprofile", nullptr);
    if (!prev) return false;
    if (prev == thread_hook) {
      Py_DECREF(prev);
    } else {
      Py_XSETREF(previous_thread_hook, prev);
      PyObject *res = threading_call("setprofile", thread_hook);
      if (!res) return false;
      Py_DECREF(res);
    }
    hook_installed = true;
  }
  // Threads that exist now, the calling one first: what PyEval_SetProfileAllThreads does on
  // 3.12+, done per thread so that each gets its own window and keeps its own chained profiler.
  PyThreadState *self = compat::current_tstate();
  if (!install(self)) return false;
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_GetInterpreter(self)); ts;
       ts = PyThreadState_Next(ts))
    if (ts != self && !install(ts)) return false;
  return true;
}

bool stop() {
  bool ok = true;
  // The threading hook first, unless someone replaced it since.
  if (hook_installed) {
    hook_installed = false;
    PyObject *current = threading_call("getprofile", nullptr);
    if (!current) {
      ok = false;
    } else {
      if (current == thread_hook) {
        PyObject *res = threading_call("setprofile", previous_thread_hook ? previous_thread_hook
                                                                          : Py_None);
        if (!res) ok = false;
        Py_XDECREF(res);
      }
      Py_DECREF(current);
    }
    Py_CLEAR(previous_thread_hook);
  }
  PyObject *now_retired = PyList_New(0);  // nullptr: the windows are released at once
  if (!now_retired) PyErr_Clear();
  PyThreadState *self = compat::current_tstate();
  for (PyThreadState *ts = PyInterpreterState_ThreadHead(PyThreadState_GetInterpreter(self)); ts;
       ts = PyThreadState_Next(ts)) {
    if (ts->c_profilefunc != on_event) {
      // Displaced by a later profiler: leave its function. If it left our window as the
      // profile object (see window_of), drop that, or sys.getprofile() returns the window forever.
      Window *stale = find_window(ts);
      if (stale && reinterpret_cast<PyObject *>(stale) == ts->c_profileobj &&
          _PyEval_SetProfile(ts, ts->c_profilefunc, nullptr) < 0)
        ok = false;
      continue;
    }
    Window *r = reinterpret_cast<Window *>(ts->c_profileobj);
    Py_tracefunc func = r->chained_func;
    PyObject *obj = Py_XNewRef(r->chained_obj);
    if (now_retired && PyList_Append(now_retired, ts->c_profileobj) == 0) retire(r);
    PyErr_Clear();
    // Drops the thread state's reference to the window, restoring the previous profiler.
    if (_PyEval_SetProfile(ts, func, obj) < 0) ok = false;
    Py_XDECREF(obj);
  }
  // Windows still referenced by a profiler that chained to us: empty them; on_event no longer
  // records (active_mode is off) and only forwards.
  for_each_window([](Window *r) {
    clear(r);
    return true;
  });
  for (Py_ssize_t i = 0; now_retired && i < PyList_GET_SIZE(now_retired); ++i)
    clear(reinterpret_cast<Window *>(PyList_GET_ITEM(now_retired, i)));
  Py_XSETREF(retired, now_retired);  // the previous round's windows go now
  if (!ok && !PyErr_Occurred())
    PyErr_SetString(PyExc_RuntimeError, "callsite.tracking: could not restore a profile function");
  return ok;
}

}  // namespace callsite::tracking::detail::profile
