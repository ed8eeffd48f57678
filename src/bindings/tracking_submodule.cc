// bindings/tracking_submodule.cc — Python bindings of the tracked call windows (callsite.tracking).
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings/submodules.h"
#include "python/tracking_queries.h"
#include "tracking/state.h"
#include "tracking/tracking.h"

namespace nb = nanobind;
namespace tr = callsite::tracking;

namespace callsite::bindings {
namespace {

PyMethodDef window_def = {
    "window",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tr::detail::window_py)),
    METH_FASTCALL | METH_KEYWORDS,
    "window(skip=0, limit=None, *, filter=None)\n--\n\n"
    "The calling thread's window of recent calls, most recent first."};

PyMethodDef last_def = {
    "last",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(tr::detail::last_py)),
    METH_FASTCALL,
    "last(filter=None, /)\n--\n\n"
    "The calling thread's most recent call site (the first `filter` keeps), as a Frame."};

tr::Mode parse_mode(const std::string &name) {
  if (name == "auto") return tr::auto_mode();
  if (name == "profile") return tr::Mode::profile;
  if (name == "monitoring") return tr::Mode::monitoring;
  throw nb::value_error(
      ("mode must be 'auto', 'monitoring' or 'profile', not '" + name + "'").c_str());
}

void enable(const std::string &mode, nb::handle window, nb::handle filter, nb::handle tool_id) {
  tr::Settings s;
  s.mode = parse_mode(mode);
  auto as_int = [](nb::handle v, const char *what) -> long long {
    if (!PyLong_Check(v.ptr()) || PyBool_Check(v.ptr()))
      throw nb::type_error((std::string(what) + " must be an int, not " +
                            Py_TYPE(v.ptr())->tp_name).c_str());
    const long long n = PyLong_AsLongLong(v.ptr());
    if (n == -1 && PyErr_Occurred()) throw nb::python_error();
    return n;
  };
  const long long w = as_int(window, "window");
  if (w < 1) throw nb::value_error(("window must be >= 1, got " + std::to_string(w)).c_str());
  s.window = std::size_t(w);
  s.filter = filter.is_none() ? nullptr : filter.ptr();
  if (!tool_id.is_none()) {
    const long long id = as_int(tool_id, "tool_id");
    if (id < 0 || id > 5)
      throw nb::value_error(("tool_id must be 0-5, got " + std::to_string(id)).c_str());
    s.tool_id = int(id);
  }
  if (!tr::enable(s)) throw nb::python_error();
}

nb::dict status() {
  const tr::detail::Status st = tr::detail::status();
  nb::dict d;
  d["enabled"] = st.mode != tr::Mode::off;
  d["mode"] = st.mode == tr::Mode::off ? nb::none() : nb::object(nb::str(tr::detail::mode_name(st.mode)));
  d["window"] = st.window;
  d["filter"] = st.filter ? nb::borrow(st.filter) : nb::none();
  d["tool_id"] = st.tool_id < 0 ? nb::none() : nb::object(nb::int_(st.tool_id));
  d["threads"] = st.threads;
  d["this_thread"] = st.this_thread_covered;
  d["callbacks"] = st.callbacks;
  d["recorded"] = st.recorded;
  d["disabled_sites"] = st.disabled;
  d["filter_errors"] = st.filter_errors;
  return d;
}

nb::dict available_modes() {
  nb::dict d;
  for (tr::Mode m : {tr::Mode::monitoring, tr::Mode::profile}) {
    const char *why = nullptr;
    d[tr::detail::mode_name(m)] = tr::available(m, &why) ? nb::none() : nb::object(nb::str(why));
  }
  return d;
}

// The nanobind-typed helpers above, as METH_NOARGS functions with text signatures.
template <PyObject *(*Fn)()>
PyObject *noargs(PyObject *, PyObject *) noexcept {
  try {
    return Fn();
  } catch (nb::python_error &e) {
    e.restore();
  } catch (const std::exception &e) {
    PyErr_SetString(PyExc_RuntimeError, e.what());
  }
  return nullptr;
}

PyObject *status_obj() { return status().release().ptr(); }
PyObject *clear_obj() {
  tr::clear();
  Py_RETURN_NONE;
}
PyObject *refresh_obj() {
  if (!tr::refresh()) throw nb::python_error();
  Py_RETURN_NONE;
}

PyMethodDef status_def = {"status", noargs<status_obj>, METH_NOARGS,
                          "status()\n--\n\nThe tracking settings and counters, as a dict."};
PyMethodDef clear_def = {"clear", noargs<clear_obj>, METH_NOARGS,
                         "clear()\n--\n\nEmpties the calling thread's window."};
PyMethodDef refresh_def = {
    "refresh", noargs<refresh_obj>, METH_NOARGS,
    "refresh()\n--\n\n"
    "sys.monitoring.restart_events(): re-applies a changed recording filter."};

}  // namespace

void init_tracking(nb::module_ &parent) {
  nb::module_ m = parent.def_submodule("tracking", "Tracked call windows (callsite.tracking).");
  m.attr("CallSite") = nb::handle(reinterpret_cast<PyObject *>(tr::detail::call_site_type));
  PyObject *window = PyCFunction_NewEx(&window_def, nullptr, m.attr("__name__").ptr());
  if (!window) throw nb::python_error();
  m.attr("window") = nb::steal(window);
  PyObject *last = PyCFunction_NewEx(&last_def, nullptr, m.attr("__name__").ptr());
  if (!last) throw nb::python_error();
  m.attr("last") = nb::steal(last);

  m.def("enable", &enable, nb::arg("mode"), nb::arg("window"), nb::arg("filter").none(),
        nb::arg("tool_id").none(),
        "Installs (or reconfigures) call tracking; see callsite.tracking.enable.");
  m.def(
      "disable", [] { if (!tr::disable()) throw nb::python_error(); },
      "Removes every tracking hook and empties every window.");
  for (PyMethodDef *def : {&status_def, &clear_def, &refresh_def}) {
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
