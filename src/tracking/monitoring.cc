// tracking/monitoring.cc — monitoring mode: sys.monitoring CALL events with a C callback (3.12+).
#include "core/compat.h"
#include "tracking/modes.h"

namespace callsite::tracking::detail::monitoring {

#if CALLSITE_HAS_MONITORING
namespace {

constexpr const char *kToolName = "callsite.tracking";
// 0 debugger, 1 coverage, 2 profiler and 5 optimizer are sys.monitoring's conventional ids
// (cProfile takes 2 on 3.12+, coverage.py's sysmon core takes 1): stay off them by default.
constexpr int kDefaultIds[] = {4, 3};

int tool = -1;
PyObject *callback = nullptr;   // the METH_FASTCALL builtin below
PyObject *disable_obj = nullptr;  // sys.monitoring.DISABLE
PyObject *dict_key = nullptr;   // key of the window in each thread-state dict
long call_event = 0;            // sys.monitoring.events.CALL
PyObject *get_tool = nullptr;   // sys.monitoring.get_tool: every query checks the id is ours
PyObject *get_events = nullptr; // sys.monitoring.get_events: ... and that CALL events are on
PyObject *tool_name = nullptr;  // kToolName, the object use_tool_id() stores (get_tool returns it)
std::uint64_t disabled_generation = 0;  // the recording filter's generation when sites were switched off

PyObject *sys_monitoring() {
  PyObject *m = PySys_GetObject("monitoring");  // borrowed
  if (!m) PyErr_SetString(PyExc_RuntimeError, "sys.monitoring is not available");
  return m;
}

// A new window in the calling thread's state dict, which owns it; nullptr (no error) when the
// thread state is being torn down, or on failure (the event is then not recorded).
Window *create_window(PyThreadState *tstate) {
  static bool creating = false;  // allocation may run a GC, whose finalizers make calls
  if (creating) return nullptr;
  if (tstate->dict == nullptr && tstate == dead_tstate &&
      PyThreadState_GetID(tstate) == dead_tstate_id)
    return nullptr;  // PyThreadState_Clear already dropped the dict: don't make a new one
  creating = true;
  Window *r = nullptr;
  PyObject *dict = PyThreadState_GetDict();  // borrowed
  if (dict) {
    r = new_window(tstate, window_size);
    if (r) r->in_dict = true;
    if (r && PyDict_SetItem(dict, dict_key, reinterpret_cast<PyObject *>(r)) < 0) Py_CLEAR(r);
    if (r) Py_DECREF(r);  // the dict's reference keeps it
  }
  creating = false;
  if (!r) PyErr_Clear();
  if (r) cache_tstate = tstate, cache_window = r;
  return r;
}

inline PyCodeObject *python_code_of(PyObject *callable) {
  if (PyFunction_Check(callable)) return reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(callable));
  if (PyMethod_Check(callable)) {
    PyObject *func = PyMethod_GET_FUNCTION(callable);
    if (PyFunction_Check(func)) return reinterpret_cast<PyCodeObject *>(PyFunction_GET_CODE(func));
  }
  return nullptr;  // builtins, types, other callables: no code object to name
}

// The CALL callback: (code, instruction_offset, callable, arg0). Returning DISABLE switches
// this (code, offset) off for our tool until restart_events(): correct exactly for call sites
// the recording filter drops, since its decision depends on the code object alone.
PyObject *on_call(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  ++callbacks;
  if (nargs < 3 || !PyCode_Check(args[0]) || active_mode != Mode::monitoring) Py_RETURN_NONE;
  PyCodeObject *code = reinterpret_cast<PyCodeObject *>(args[0]);
  // The rules changed since sites were switched off: some may be kept now. restart_events()
  // is allowed from a callback; the sites that are still dropped switch off again.
  if (disabled && record_filter_generation() != disabled_generation && !restart()) PyErr_Clear();
  if (!record_keeps(code)) {
    disabled_generation = record_filter_generation();
    ++disabled;
    return Py_NewRef(disable_obj);
  }
  PyThreadState *tstate = compat::current_tstate();
  Window *r = tstate == cache_tstate ? cache_window : window_of(tstate);
  if (!r) Py_RETURN_NONE;
  PyObject *off = args[1];
  // Offsets are non-negative ints below 2**30: compact on 3.12+, no conversion error possible.
  const std::intptr_t offset = PyUnstable_Long_IsCompact(reinterpret_cast<PyLongObject *>(off))
                                   ? std::intptr_t(PyUnstable_Long_CompactValue(
                                         reinterpret_cast<PyLongObject *>(off)))
                                   : std::intptr_t(PyLong_AsSsize_t(off));
  push(r, code, offset, python_code_of(args[2]));
  ++recorded;
  Py_RETURN_NONE;
}

PyMethodDef on_call_def = {
    "_tracking_on_call", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(on_call)),
    METH_FASTCALL, "callsite.tracking's sys.monitoring CALL callback."};

bool init_objects(PyObject *mon) {
  if (!callback && !(callback = PyCFunction_NewEx(&on_call_def, nullptr, nullptr))) return false;
  if (!dict_key && !(dict_key = PyUnicode_InternFromString("callsite.tracking.window"))) return false;
  if (!disable_obj && !(disable_obj = PyObject_GetAttrString(mon, "DISABLE"))) return false;
  if (!get_tool && !(get_tool = PyObject_GetAttrString(mon, "get_tool"))) return false;
  if (!get_events && !(get_events = PyObject_GetAttrString(mon, "get_events"))) return false;
  if (!tool_name && !(tool_name = PyUnicode_InternFromString(kToolName))) return false;
  if (!call_event) {
    PyObject *events = PyObject_GetAttrString(mon, "events");
    PyObject *call = events ? PyObject_GetAttrString(events, "CALL") : nullptr;
    Py_XDECREF(events);
    if (!call) return false;
    call_event = PyLong_AsLong(call);
    Py_DECREF(call);
    if (call_event == -1 && PyErr_Occurred()) return false;
  }
  return true;
}

// sys.monitoring.get_tool(id): a new reference (None when free) or nullptr + error.
PyObject *holder(PyObject *mon, int id) { return PyObject_CallMethod(mon, "get_tool", "i", id); }

template <class... Args>
bool call(PyObject *mon, const char *name, const char *format, Args... args) {
  PyObject *res = PyObject_CallMethod(mon, name, format, args...);
  Py_XDECREF(res);
  return res != nullptr;
}

// Takes `id` for callsite, or explains who holds it. -1: error set; 0: taken (message appended
// to `taken`); 1: ours.
int claim(PyObject *mon, int id, PyObject *taken) {
  PyObject *name = holder(mon, id);
  if (!name) return -1;
  if (name != Py_None) {
    PyObject *line = PyUnicode_FromFormat("tool id %d is in use by %R", id, name);
    Py_DECREF(name);
    if (!line || PyList_Append(taken, line) < 0) {
      Py_XDECREF(line);
      return -1;
    }
    Py_DECREF(line);
    return 0;
  }
  Py_DECREF(name);
  return call(mon, "use_tool_id", "iO", id, tool_name) ? 1 : -1;
}

// 1: `tool` is still callsite's; 0: another tool freed it (and may have taken it); -1: error.
// One call of a builtin and a pointer compare: it runs on every window query.
int still_owned(PyObject **name_out) {
  PyObject *id = PyLong_FromLong(tool);  // a small int: no allocation
  PyObject *name = id ? PyObject_CallOneArg(get_tool, id) : nullptr;
  Py_XDECREF(id);
  if (!name) return -1;
  const int ours = name == tool_name || (PyUnicode_Check(name) &&
                                         PyUnicode_CompareWithASCIIString(name, kToolName) == 0);
  if (name_out)
    *name_out = name;
  else
    Py_DECREF(name);
  return ours;
}

// Whether sys.monitoring still calls callsite's callback: the interpreter's table of callbacks
// (PyInterpreterState.monitoring_callables, 3.12+) holds a reference to the one registered for
// each (tool, event), and nothing else keeps one to callsite's but `callback` itself. Another
// tool that registers its own callback (or None) for callsite's id drops that reference. A tool
// that keeps the one it replaced (to chain to it) leaves the count as it was: not caught here.
inline bool callback_registered() noexcept { return Py_REFCNT(callback) >= 2; }

// 1: CALL events are on for `tool`; 0: another tool turned them off; -1: error.
int call_events_on() {
  PyObject *id = PyLong_FromLong(tool);  // a small int: no allocation
  PyObject *events = id ? PyObject_CallOneArg(get_events, id) : nullptr;
  Py_XDECREF(id);
  if (!events) return -1;
  const long set = PyLong_AsLong(events);
  Py_DECREF(events);
  if (set == -1 && PyErr_Occurred()) return -1;
  return (set & call_event) != 0;
}

}  // namespace

bool available(const char **) noexcept { return true; }

bool check_owned() noexcept {
  if (tool < 0) return true;
  PyObject *name = nullptr;
  const int owned = still_owned(&name);
  if (owned == 0)
    PyErr_Format(PyExc_RuntimeError,
                 "callsite.tracking lost its sys.monitoring tool id %d (another tool freed it; "
                 "it is now held by %R): call callsite.tracking.enable() again",
                 tool, name);
  Py_XDECREF(name);
  if (owned != 1) return false;
  // The id is still callsite's, but another tool may have used it: the window then holds
  // the calls made before, which would be answered as the most recent ones.
  if (!callback_registered()) {
    PyErr_Format(PyExc_RuntimeError,
                 "callsite.tracking's sys.monitoring CALL callback for tool id %d was replaced "
                 "by another tool (sys.monitoring.register_callback): the window no longer "
                 "records calls; call callsite.tracking.enable() again",
                 tool);
    return false;
  }
  const int on = call_events_on();
  if (on == 0)
    PyErr_Format(PyExc_RuntimeError,
                 "callsite.tracking's sys.monitoring CALL events for tool id %d were turned off "
                 "by another tool (sys.monitoring.set_events): the window no longer records "
                 "calls; call callsite.tracking.enable() again",
                 tool);
  return on == 1;
}
int tool_id() noexcept { return tool; }

Window *window_of(PyThreadState *tstate) noexcept {
  if (Window *r = find_window(tstate)) return r;
  return create_window(tstate);
}

bool start(int requested) {
  PyObject *mon = sys_monitoring();
  if (!mon || !init_objects(mon)) return false;
  PyObject *taken = PyList_New(0);
  if (!taken) return false;
  int got = -1, rc = 0;
  if (requested >= 0) {
    rc = claim(mon, requested, taken);
    if (rc == 1) got = requested;
  } else {
    for (int id : kDefaultIds) {
      rc = claim(mon, id, taken);
      if (rc != 0) {
        if (rc == 1) got = id;
        break;
      }
    }
  }
  if (rc == 0) {  // every candidate is held by another tool: say by whom
    PyObject *sep = PyUnicode_FromString("; ");
    PyObject *why = sep ? PyUnicode_Join(sep, taken) : nullptr;
    Py_XDECREF(sep);
    if (why)
      PyErr_Format(PyExc_RuntimeError,
                   "callsite.tracking cannot take a sys.monitoring tool id: %U%s", why,
                   requested >= 0 ? "" : " (pass tool_id=N to use another id, 0-5)");
    Py_XDECREF(why);
  }
  Py_DECREF(taken);
  if (got < 0) return false;
  // A site we switched off under an earlier filter stays off for this id until a restart,
  // even after set_events() toggles CALL: restart before recording under new rules.
  if (disabled && !restart()) return false;
  if (!call(mon, "register_callback", "ilO", got, call_event, callback) ||
      !call(mon, "set_events", "il", got, call_event)) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    call(mon, "register_callback", "ilO", got, call_event, Py_None);
    call(mon, "free_tool_id", "i", got);
    PyErr_Restore(type, value, tb);
    return false;
  }
  tool = got;
  return true;
}

bool stop() {
  if (tool < 0) return true;
  PyObject *mon = sys_monitoring();
  if (!mon) return false;
  // Another tool may have freed the id and taken it since: then it is theirs to keep.
  const int owned = still_owned(nullptr);
  bool ok = owned >= 0;
  if (owned == 1) {
    // All three, whatever fails: 3.12's free_tool_id() leaves callbacks and events in place.
    ok = call(mon, "set_events", "il", tool, 0L);
    ok = call(mon, "register_callback", "ilO", tool, call_event, Py_None) && ok;
    ok = call(mon, "free_tool_id", "i", tool) && ok;
  }
  tool = -1;
  drop_windows();
  return ok;
}

bool restart() {
  PyObject *mon = sys_monitoring();
  if (!mon) return false;
  PyObject *res = PyObject_CallMethod(mon, "restart_events", nullptr);
  if (!res) return false;
  Py_DECREF(res);
  disabled = 0;
  return true;
}

void drop_windows() noexcept {
  // Collect first: deleting a dict entry frees the window, which unlinks it from the registry.
  PyObject *dicts = PyList_New(0);
  if (!dicts) {
    PyErr_Clear();
    return;
  }
  for (Window *r = first_window(); r; r = r->next)
    if (r->tstate->dict && PyList_Append(dicts, r->tstate->dict) < 0) PyErr_Clear();
  for (Py_ssize_t i = 0; i < PyList_GET_SIZE(dicts); ++i)
    if (PyDict_DelItem(PyList_GET_ITEM(dicts, i), dict_key) < 0) PyErr_Clear();
  Py_DECREF(dicts);
}

#else  // before 3.12 (or free-threaded): no sys.monitoring mode

bool available(const char **why_not) noexcept {
  if (why_not)
    *why_not = !compat::kHasSysMonitoring
                   ? "sys.monitoring needs Python 3.12+; use mode='profile'"
                   : "the free-threaded build is not supported (the window assumes the GIL)";
  return false;
}
int tool_id() noexcept { return -1; }
bool check_owned() noexcept { return true; }
Window *window_of(PyThreadState *) noexcept { return nullptr; }
bool start(int) {
  const char *why = nullptr;
  available(&why);
  PyErr_SetString(PyExc_RuntimeError, why);
  return false;
}
bool stop() { return true; }
bool restart() { return true; }
void drop_windows() noexcept {}

#endif

}  // namespace callsite::tracking::detail::monitoring
