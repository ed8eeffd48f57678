// bindings/native.cc — registers the native-frame subsystem as callsite._callsite.native and the C
// API capsule callsite._callsite._C_API. No logic: the types live in src/native/.
#include "bindings/init.h"
#include "native/api_table.h"
#include "native/bench.h"
#include "native/demo_interp.h"
#include "native/executable_object.h"
#include "native/py_frame.h"
#include "native/reify.h"

namespace nb = nanobind;
namespace native = callsite::native;

namespace callsite::bindings {
namespace {

nb::object checked(PyObject *result) {
  if (!result) throw nb::python_error();
  return nb::steal(result);
}

}  // namespace

void init_native(nb::module_ &m) {
  if (!native::init_reify() || !native::init_executable_type() ||
      !native::init_native_frame_types())
    throw nb::python_error();
  m.attr("_C_API") = nb::steal(native::new_api_capsule());

  nb::module_ n = m.def_submodule("native", "Native and JIT frames (issue 6).");
  n.attr("Executable") = nb::handle(reinterpret_cast<PyObject *>(native::executable_type));
  n.attr("NativeFrame") = nb::handle(reinterpret_cast<PyObject *>(native::native_frame_type));
  n.attr("FramedFunction") =
      nb::handle(reinterpret_cast<PyObject *>(native::framed_function_type));
  n.attr("ReificationWarning") = nb::handle(native::reification_warning);
  n.attr("_CalcProgram") = checked(reinterpret_cast<PyObject *>(native::calc_program_type()));
  n.def("current", [] { return checked(native::current_python_frame()); },
        "The innermost NativeFrame pushed from Python that is active here, or None.");
  n.def("stack", [] { return checked(native::visible_stack()); },
        "[(name, kind, state), ...]: the native frames a capture here would see, innermost "
        "first.");
  // Measured loops for bench/bench_native.py (not API).
  n.def("_bench_empty", &native::bench::empty_loop, nb::arg("n"));
  n.def("_bench_push_pop", &native::bench::push_pop_loop, nb::arg("n"));
  n.def("_bench_push_set_pop", &native::bench::push_set_pop_loop, nb::arg("n"));
  n.def("_bench_capture", [](size_t native_frames, size_t iterations) {
    const double ns = native::bench::capture_with_native(native_frames, iterations);
    if (ns < 0) throw nb::python_error();
    return ns;
  }, nb::arg("native"), nb::arg("iterations"));
  n.def("_bench_reify", [](nb::object reifier, size_t states) {
    return checked(native::bench::reify_cost(reifier.is_none() ? nullptr : reifier.ptr(), states));
  }, nb::arg("reifier").none(), nb::arg("states"));
  n.def("cache_info", [] { return checked(native::cache_info()); },
        "Reification cache counters: executables, entries, hits, misses.");
}

}  // namespace callsite::bindings
