// testing/testing_module.cc — callsite._callsite_testing: test hooks and bench loops, built only with
// CALLSITE_TESTING=ON (never in a release wheel). The bench loops reach _callsite through its C
// API capsule; code_positions decodes line tables with this module's own copy of the core.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <exception>
#include <string>

#include "callsite/api.h"
#include "core/compat.h"
#include "layouts/code_extra.h"
#include "layouts/layout.h"
#include "testing/code_positions.h"
#include "testing/native_bench.h"
#include "testing/native_locals_nogil.h"

namespace nb = nanobind;
namespace t = callsite::testing;

namespace {

nb::object checked(PyObject *result) {
  if (!result) throw nb::python_error();
  return nb::steal(result);
}

}  // namespace

NB_MODULE(_callsite_testing, m) {
  if (!callsite::api::import()) throw nb::python_error();
  m.def(
      "code_positions",
      [](nb::handle code) { return checked(callsite::detail::debug_code_positions(code.ptr())); },
      nb::arg("code"), "Decoded positions per code unit (tests compare with co_positions()).");
  m.def(
      "debug_offsets_refusal",
      [](nb::bytes image) -> nb::object {
        const char *why = callsite_layout_debug_offsets_refusal(image.c_str(), image.size());
        return why ? nb::object(nb::str(why)) : nb::none();
      },
      nb::arg("image"),
      "Whether this build would refuse its layout given an interpreter's _PyRuntime.debug_offsets "
      "(the bytes): the reason, or None (tests use other versions' offsets).");
  m.def(
      "default_terminate_handler",
      [] {
        // The terminate handler _callsite installs for daemon threads at interpreter exit
        // (python/daemon_exit.cc) is process-wide: putting libstdc++'s default back lets the
        // tests show which paths pass pthread_exit's forced unwind without it.
#if defined(__GLIBCXX__)
        return std::set_terminate(__gnu_cxx::__verbose_terminate_handler) !=
               __gnu_cxx::__verbose_terminate_handler;
#else
        return std::set_terminate(nullptr) != nullptr;
#endif
      },
      "Puts the C++ runtime's default std::terminate handler back; True if another was set.");
  m.def(
      "code_extra_reads",
      [](nb::handle code, Py_ssize_t slots) {
        if (!PyCode_Check(code.ptr()))
          throw nb::type_error(("code_extra_reads(): code must be a code object, not " +
                                std::string(Py_TYPE(code.ptr())->tp_name))
                                   .c_str());
        nb::list out;
        for (Py_ssize_t i = 0; i < slots; ++i) {
          void *expected = nullptr;
          if (callsite::compat::code_get_extra(code.ptr(), i, &expected) < 0)
            throw nb::python_error();
          void *direct =
              callsite_code_extra_read(reinterpret_cast<PyCodeObject *>(code.ptr()), i);
          out.append(nb::make_tuple(reinterpret_cast<std::uintptr_t>(direct),
                                    reinterpret_cast<std::uintptr_t>(expected)));
        }
        return out;
      },
      nb::arg("code"), nb::arg("slots"),
      "(co_extra read directly, PyUnstable_Code_GetExtra) per slot below `slots`, as ints.");
  m.def("bench_empty", &t::empty_loop, nb::arg("n"));
  m.def("bench_push_pop", &t::push_pop_loop, nb::arg("n"));
  m.def("bench_push_set_pop", &t::push_set_pop_loop, nb::arg("n"));
  m.def(
      "bench_capture",
      [](size_t native_frames, size_t iterations, bool visible) {
        const double ns = t::capture_with_native(native_frames, iterations, visible);
        if (ns < 0) throw nb::python_error();
        return ns;
      },
      nb::arg("native"), nb::arg("iterations"), nb::arg("visible") = false);
  m.def("bench_push_pop_visible", &t::push_pop_visible_loop, nb::arg("n"));
  m.def("bench_push_set_pop_visible", &t::push_set_pop_visible_loop, nb::arg("n"));
  m.def("bench_push_switch_pop_visible", &t::push_switch_pop_visible_loop, nb::arg("n"));
  m.def("bench_visible_available", &t::visible_available);
  m.def("bench_push_pop_visible_locals", &t::push_pop_visible_locals_loop, nb::arg("n"));
  m.def("bench_push_set_pop_visible_locals", &t::push_set_pop_visible_locals_loop, nb::arg("n"));
  m.def("bench_locals_calls", &t::locals_calls);
  m.def(
      "bench_visible_build",
      [](size_t states) {
        const double ns = t::visible_build_cost(states);
        if (ns < 0) throw nb::python_error();
        return ns;
      },
      nb::arg("states"));
  m.def(
      "visible_code_of_static",
      [](nb::bytes name, size_t states) {
        return checked(t::visible_code_of_static(name.c_str(), states));
      },
      nb::arg("name"), nb::arg("states"));
  m.def(
      "call_in_visible_frame_on_new_thread",
      [](nb::handle callback, std::uintptr_t state) {
        return checked(t::call_in_visible_frame_on_new_thread(callback.ptr(), state));
      },
      nb::arg("callback"), nb::arg("state"));
  m.def(
      "frames_with_locals_without_gil",
      [](size_t threads, size_t pushes, nb::handle reader) {
        return checked(t::frames_with_locals_without_gil(threads, pushes, reader.ptr()));
      },
      nb::arg("threads"), nb::arg("pushes"), nb::arg("reader"));
  m.def(
      "bench_reify",
      [](nb::object reifier, size_t states) {
        return checked(t::reify_cost(reifier.is_none() ? nullptr : reifier.ptr(), states));
      },
      nb::arg("reifier").none(), nb::arg("states"));
}
