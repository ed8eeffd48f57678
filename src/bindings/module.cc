// bindings/module.cc — the _callsite extension: registers types and functions, no logic.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings/init.h"
#include "capture/backend.h"
#include "capture/capture.h"
#include "capture/traceback_object.h"
#include "render/frame_object.h"
#include "symbolize/code_info.h"
#include "symbolize/debug.h"

namespace nb = nanobind;

namespace {

// capture() is registered as a raw METH_FASTCALL function: it is the hot entry point and
// nanobind's overload dispatch would add its own cost to every call.
PyMethodDef capture_def = {
    "capture", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(callsite::detail::capture_py)),
    METH_FASTCALL | METH_KEYWORDS,
    "capture(skip=0, limit=None, *, filter=None, source='walk') -> Traceback\n\n"
    "The calling thread's stack, innermost first: skip drops that many innermost frames\n"
    "(0 keeps the caller of capture), limit keeps at most that many."};

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
  if (!callsite::detail::init_traceback_type() || !callsite::detail::init_frame_type())
    throw nb::python_error();
  m.attr("Traceback") = nb::handle(reinterpret_cast<PyObject *>(callsite::detail::traceback_type));
  m.attr("Frame") = nb::handle(reinterpret_cast<PyObject *>(callsite::detail::frame_type));
  if (!callsite::detail::init_code_info())
    PyErr_WarnEx(PyExc_RuntimeWarning,
                 "callsite: no co_extra index left; line tables will be decoded on every use", 1);
  if (!callsite::detail::init_backend()) throw nb::python_error();

  PyObject *capture = PyCFunction_NewEx(&capture_def, nullptr, m.attr("__name__").ptr());
  if (!capture) throw nb::python_error();
  m.attr("capture") = nb::steal(capture);

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
      "_debug_offsets_refusal",
      [](nb::bytes image) -> nb::object {
        const char *why = callsite_layout_debug_offsets_refusal(image.c_str(), image.size());
        return why ? nb::object(nb::str(why)) : nb::none();
      },
      nb::arg("image"),
      "Whether this build would refuse its layout given an interpreter's _PyRuntime.debug_offsets "
      "(the bytes): the reason, or None (tests use other versions' offsets).");
  m.def(
      "_code_positions",
      [](nb::handle code) { return nb::steal(callsite::detail::debug_code_positions(code.ptr())); },
      nb::arg("code"), "Decoded positions per code unit (tests compare with co_positions()).");
  m.attr("layout_name") = callsite_layout_internal() ? callsite_layout_internal()->name : "none";

  callsite::bindings::init_filter(m);
  callsite::bindings::init_mlir(m);
  callsite::bindings::init_tracking(m);
  callsite::bindings::init_native(m);
}
