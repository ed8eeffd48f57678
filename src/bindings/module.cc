// bindings/module.cc — the _callsite extension: registers types and functions, no logic.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings/submodules.h"
#include "capture/backend.h"
#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "filter/decisions.h"
#include "layouts/layout.h"
#include "python/boundary_type.h"
#include "python/capture_entry.h"
#include "python/frame_type.h"
#include "python/init.h"
#include "symbolize/code_info.h"
#include "symbolize/source_lines.h"
#include "torch/torch_init.h"

namespace nb = nanobind;

namespace {

// capture() is registered as a raw METH_FASTCALL function: it is the hot entry point and
// nanobind's overload dispatch would add its own cost to every call.
PyMethodDef capture_def = {
    "capture", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(callsite::detail::capture_py)),
    METH_FASTCALL | METH_KEYWORDS,
    "capture(skip=0, limit=None, *, filter=None, source='walk')\n--\n\n"
    "The calling thread's stack, innermost first: skip drops that many innermost frames\n"
    "(0 keeps the caller of capture), limit keeps at most that many.\n\n"
    R"doc(Raises:
    TypeError: ``skip`` or ``limit`` is not an int (or None), as in
        ``callsite.capture(skip="1")``.
    ValueError: ``skip`` or ``limit`` is negative, as in ``callsite.capture(limit=-1)``.
    TypeError: ``filter`` is not a :class:`callsite.Filter` or None, as in
        ``callsite.capture(filter=3)``.
    ValueError: ``source`` is not ``'walk'`` or ``'window'``, as in
        ``callsite.capture(source="stack")``.
    RuntimeError: ``source='window'`` while call tracking is off, as in
        ``callsite.capture(source="window")``.

Example:
    ::

        import callsite

        def where_am_i():
            return callsite.capture(skip=1)     # drop where_am_i's own frame

        tb = where_am_i()
        print(tb[0].filename, tb[0].lineno)     # this file, the line calling where_am_i()
        print(len(callsite.capture(limit=1)))   # 1
)doc"};

PyObject *source_lines_py(PyObject *, PyObject *filename) {
  return callsite::detail::source_lines(filename);
}
PyMethodDef source_lines_def = {
    "_source_lines", source_lines_py, METH_O,
    "_source_lines(filename, /)\n--\n\n"
    "linecache.getlines(filename), read natively where the result is the same."};

std::string backend_name() {
  return callsite::backend() == callsite::Backend::internal ? "internal" : "public";
}

void set_backend_by_name(const std::string &name) {
  if (name == "public") {
    callsite::set_backend(callsite::Backend::public_api);
    return;
  }
  if (name != "internal")
    throw nb::value_error(("backend must be 'internal' or 'public', not '" + name + "'").c_str());
  const char *why = nullptr;
  if (!callsite::set_backend(callsite::Backend::internal, &why))
    throw std::runtime_error(std::string("the internal backend is unavailable: ") + why);
}

}  // namespace

NB_MODULE(_callsite, m) {
  // Every cache of Python objects here is process-wide (static types, compiled patterns,
  // interned names): one interpreter owns them. A subinterpreter (even one sharing the GIL)
  // gets this ImportError instead of objects another interpreter may destroy.
  if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
    PyErr_SetString(PyExc_ImportError,
                    "callsite cannot be imported in a subinterpreter: it supports the main "
                    "interpreter only");
    throw nb::python_error();
  }
  if (!callsite::python::init_module()) throw nb::python_error();
  m.attr("Traceback") = nb::handle(reinterpret_cast<PyObject *>(callsite::detail::traceback_type));
  m.attr("Frame") = nb::handle(reinterpret_cast<PyObject *>(callsite::detail::frame_type));
  m.attr("Filter") = nb::handle(reinterpret_cast<PyObject *>(callsite::detail::filter_type));
  m.attr("boundary") = nb::handle(reinterpret_cast<PyObject *>(callsite::detail::boundary_type));
  m.attr("_TorchTexts") = nb::handle(reinterpret_cast<PyObject *>(callsite::torch::texts_type()));

  PyObject *capture = PyCFunction_NewEx(&capture_def, nullptr, m.attr("__name__").ptr());
  if (!capture) throw nb::python_error();
  m.attr("capture") = nb::steal(capture);
  PyObject *source_lines = PyCFunction_NewEx(&source_lines_def, nullptr, m.attr("__name__").ptr());
  if (!source_lines) throw nb::python_error();
  m.attr("_source_lines") = nb::steal(source_lines);
  m.def(
      "_source_line",
      [](nb::handle filename, long lineno) {
        PyObject *line = callsite::detail::source_line(filename.ptr(), lineno);
        if (!line) throw nb::python_error();
        return nb::steal(line);
      },
      nb::arg("filename"), nb::arg("lineno"),
      "linecache.getline(filename, lineno), read natively where the result is the same.");

  m.def("get_backend", &backend_name, "The frame walk in use: 'internal' or 'public'.");
  m.def("set_backend", &set_backend_by_name, nb::arg("name"),
        "Selects the frame walk: 'internal' (CPython's frames read directly) or 'public'.");
  m.def(
      "internal_backend_refusal",
      []() -> nb::object {
        const char *why = callsite::detail::internal_refusal();
        return why ? nb::object(nb::str(why)) : nb::none();
      },
      "Why the internal walk is unavailable, or None.");
  m.def(
      "code_extra_refusal",
      []() -> nb::object {
        const char *why = callsite::detail::code_info_direct_refusal();
        return why ? nb::object(nb::str(why)) : nb::none();
      },
      "Why callsite's per-code-object cache is read through PyUnstable_Code_GetExtra rather "
      "than from co_extra directly, or None when it is read directly.");
  m.def(
      "_use_code_extra_direct",
      [](bool on) { return callsite::detail::use_code_info_direct(on); },
      nb::arg("on"), "Switches the direct co_extra read (tests); returns whether it is on.");
  m.def(
      "_build_info",
      [] {
        nb::dict d;
#if defined(__clang__)
        d["compiler"] = "clang " __clang_version__;
#elif defined(__GNUC__)
        d["compiler"] = "gcc " __VERSION__;
#else
        d["compiler"] = "unknown";
#endif
        d["cplusplus"] = long(__cplusplus);
        d["python_headers"] = PY_VERSION;
        d["nanobind"] = std::to_string(NB_VERSION_MAJOR) + "." + std::to_string(NB_VERSION_MINOR) +
                        "." + std::to_string(NB_VERSION_PATCH);
        d["internal_layout_compiled"] = bool(CALLSITE_HAVE_LAYOUT);
#ifdef NDEBUG
        d["assertions"] = false;
#else
        d["assertions"] = true;
#endif
        return d;
      },
      "The compiler, headers and options this extension was built with (callsite.doctor()).");
  m.attr("layout_name") = callsite_layout_internal() ? callsite_layout_internal()->name : "none";

  callsite::bindings::init_mlir(m);
  callsite::bindings::init_tracking(m);
  callsite::bindings::init_native(m);
}
