// bindings/tracking_submodule.cc — Python bindings of the tracked call windows (callsite.tracking).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings/submodules.h"
#include "python/tracking_queries.h"
#include "tracking/state.h"
#include "tracking/tracking.h"
#include "tracking/window.h"

namespace nb = nanobind;
namespace tr = callsite::tracking;

namespace callsite::bindings {
namespace {

PyMethodDef window_def = {
    "window",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tr::detail::window_py)),
    METH_FASTCALL | METH_KEYWORDS,
    "window(skip=0, limit=None, *, filter=None)\n--\n\n"
    "The calling thread's window of recent calls, most recent first (entry 0 is the call of\n"
    "window() itself).\n\n"
    R"doc(Raises:
    RuntimeError: call tracking is off, as in ``tracking.window()``.
    ValueError: ``skip`` or ``limit`` is negative, as in ``tracking.window(skip=-1)``.

Example:
    ::

        import callsite.tracking as tracking

        with tracking.enable(window=4):
            print(len(tracking.window()) >= 1)
)doc"};

PyMethodDef last_def = {
    "last",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tr::detail::last_py)),
    METH_FASTCALL | METH_KEYWORDS,
    "last(filter=None, /)\n--\n\n"
    "The calling thread's most recent call site (the first `filter` keeps), as a Frame, or\n"
    "None. Entry 0 is the call of last() itself: pass a filter that drops the calling file,\n"
    "or record with one (enable(filter=...)).\n\n"
    R"doc(Raises:
    RuntimeError: call tracking is off, as in ``tracking.last()``.

Example:
    ::

        import callsite, callsite.tracking as tracking

        dsl = {}   # a DSL's module, compiled under its own file name
        exec(compile("import callsite.tracking as tracking\n"
                     "def op(user):\n"
                     "    return tracking.last(user)\n", "my_dsl.py", "exec"), dsl)
        user = callsite.Filter(exclude=[r"my_dsl\.py$"])
        with tracking.enable(window=8):
            site = dsl["op"](user)            # the user's line: the call into the DSL
        print(site.qualname, site.lineno)     # <module> 9
)doc"};

// enable() and disable() run Python code (threading.setprofile), so they are plain METH_FASTCALL
// functions rather than nanobind ones: nanobind's dispatcher is noexcept and catches `...`,
// which before 3.14 would turn the forced unwind of a daemon thread ended by interpreter
// finalization (pthread_exit) into std::terminate. Errors are Python errors, no C++ exception.

// An int argument (not bool): false + TypeError naming it.
bool int_arg(PyObject *v, const char *what, long long *out) {
  if (!PyLong_Check(v) || PyBool_Check(v)) {
    PyErr_Format(PyExc_TypeError, "%s must be an int, not %.200s", what, Py_TYPE(v)->tp_name);
    return false;
  }
  *out = PyLong_AsLongLong(v);
  return !(*out == -1 && PyErr_Occurred());
}

bool parse_mode(PyObject *name, tr::Mode *out) {
  if (!PyUnicode_Check(name)) {
    PyErr_Format(PyExc_TypeError, "mode must be a str, not %.200s", Py_TYPE(name)->tp_name);
    return false;
  }
  if (PyUnicode_CompareWithASCIIString(name, "auto") == 0) return *out = tr::auto_mode(), true;
  if (PyUnicode_CompareWithASCIIString(name, "profile") == 0) return *out = tr::Mode::profile, true;
  if (PyUnicode_CompareWithASCIIString(name, "monitoring") == 0)
    return *out = tr::Mode::monitoring, true;
  PyErr_Format(PyExc_ValueError, "mode must be 'auto', 'monitoring' or 'profile', not %R", name);
  return false;
}

// enable(mode, window, filter, tool_id), all positional (callsite/tracking.py checks them first).
PyObject *enable_py(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs != 4) {
    PyErr_Format(PyExc_TypeError, "enable() takes 4 arguments (mode, window, filter, tool_id), "
                                  "%zd given", nargs);
    return nullptr;
  }
  tr::Settings s;
  long long w = 0;
  if (!parse_mode(args[0], &s.mode) || !int_arg(args[1], "window", &w)) return nullptr;
  if (w < 1) {
    PyErr_Format(PyExc_ValueError, "window must be >= 1, got %lld", w);
    return nullptr;
  }
  s.window = std::size_t(w);
  s.filter = args[2] == Py_None ? nullptr : args[2];
  if (args[3] != Py_None) {
    long long id = 0;
    if (!int_arg(args[3], "tool_id", &id)) return nullptr;
    if (id < 0 || id > 5) {
      PyErr_Format(PyExc_ValueError, "tool_id must be 0-5, got %lld", id);
      return nullptr;
    }
    s.tool_id = int(id);
  }
  if (!tr::enable(s)) return nullptr;
  Py_RETURN_NONE;
}

PyObject *disable_py(PyObject *, PyObject *) {
  if (!tr::disable()) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef enable_def = {
    "enable", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(enable_py)),
    METH_FASTCALL,
    "enable(mode, window, filter, tool_id, /)\n--\n\n"
    "Installs (or reconfigures) call tracking; see callsite.tracking.enable."};
PyMethodDef disable_def = {"disable", disable_py, METH_NOARGS,
                           "disable()\n--\n\nRemoves every tracking hook and empties every window."};

nb::dict available_modes() {
  nb::dict d;
  for (tr::Mode m : {tr::Mode::monitoring, tr::Mode::profile}) {
    const char *why = nullptr;
    d[tr::detail::mode_name(m)] = tr::available(m, &why) ? nb::none() : nb::object(nb::str(why));
  }
  return d;
}

// status(), clear(), refresh(): plain C API as well, holding no object whose destructor would
// call the C API while that unwind passes.
PyObject *status_obj(PyObject *, PyObject *) {
  const tr::detail::Status st = tr::detail::status();
  PyObject *tool_id = st.tool_id < 0 ? Py_NewRef(Py_None) : PyLong_FromLong(st.tool_id);
  if (!tool_id) return nullptr;
  return Py_BuildValue(
      "{s:O,s:z,s:n,s:O,s:N,s:n,s:O,s:K,s:K,s:K,s:K}", "enabled",
      st.mode != tr::Mode::off ? Py_True : Py_False, "mode",
      st.mode == tr::Mode::off ? nullptr : tr::detail::mode_name(st.mode), "window",
      Py_ssize_t(st.window), "filter", st.filter ? st.filter : Py_None, "tool_id", tool_id,
      "threads", Py_ssize_t(st.threads), "this_thread",
      st.this_thread_covered ? Py_True : Py_False, "callbacks",
      (unsigned long long)st.callbacks, "recorded", (unsigned long long)st.recorded,
      "disabled_sites", (unsigned long long)st.disabled, "filter_errors",
      (unsigned long long)st.filter_errors);
}
PyObject *clear_obj(PyObject *, PyObject *) {
  tr::clear();
  Py_RETURN_NONE;
}
PyObject *refresh_obj(PyObject *, PyObject *) {
  if (!tr::refresh()) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef status_def = {"status", status_obj, METH_NOARGS,
                          "status()\n--\n\nThe tracking settings and counters, as a dict.\n\n"
                          R"doc(Example:
    ::

        import callsite.tracking as tracking

        with tracking.enable(window=16):
            print(tracking.status()["window"])
)doc"};
PyMethodDef clear_def = {"clear", clear_obj, METH_NOARGS,
                         "clear()\n--\n\nEmpties the calling thread's window (none while call tracking "
                         "is off: nothing to do).\n\n"
                         R"doc(Example:
    ::

        import callsite.tracking as tracking

        with tracking.enable():
            tracking.clear()
)doc"};
PyMethodDef refresh_def = {
    "refresh", refresh_obj, METH_NOARGS,
    "refresh()\n--\n\n"
    "sys.monitoring.restart_events(): re-applies a changed recording filter.\n\n"
    R"doc(Example:
    ::

        import callsite, callsite.tracking as tracking

        user = callsite.Filter()
        with tracking.enable(filter=user):
            user.exclude_dir("/opt/my_dsl")
            tracking.refresh()                               # the changed rules apply
)doc"};

}  // namespace

void init_tracking(nb::module_ &parent) {
  nb::module_ m = parent.def_submodule("tracking", "Tracked call windows (callsite.tracking).");
  m.attr("CallSite") = nb::handle(reinterpret_cast<PyObject *>(tr::detail::call_site_type));
  m.attr("Window") = nb::handle(reinterpret_cast<PyObject *>(tr::detail::window_type));
  PyObject *window = PyCFunction_NewEx(&window_def, nullptr, m.attr("__name__").ptr());
  if (!window) throw nb::python_error();
  m.attr("window") = nb::steal(window);
  PyObject *last = PyCFunction_NewEx(&last_def, nullptr, m.attr("__name__").ptr());
  if (!last) throw nb::python_error();
  m.attr("last") = nb::steal(last);

  for (PyMethodDef *def : {&enable_def, &disable_def, &status_def, &clear_def, &refresh_def}) {
    PyObject *fn = PyCFunction_NewEx(def, nullptr, m.attr("__name__").ptr());
    if (!fn) throw nb::python_error();
    m.attr(def->ml_name) = nb::steal(fn);
  }
  m.def("available_modes", &available_modes,
        "{mode: None if available, else the reason it is not}.");
  m.def(
      "auto_mode", [] { return tr::detail::mode_name(tr::auto_mode()); },
      "The mode enable(mode='auto') picks here.");
}

}  // namespace callsite::bindings
