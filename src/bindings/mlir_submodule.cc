// bindings/mlir_submodule.cc — registers the MLIR subsystem (the logic lives in src/mlir).
#include "bindings/submodules.h"
#include "capture/boundary.h"
#include "mlir/bindings_type.h"
#include "mlir/context_cache.h"
#include "mlir/injector.h"
#include "mlir/locate.h"
#include "mlir/settings.h"

namespace nb = nanobind;

namespace callsite::bindings {
namespace {

PyMethodDef location_def = {
    "location",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(mlir::location_py)),
    METH_FASTCALL | METH_KEYWORDS,
    "location(source=None, /, *, filter=None, skip=0, context=None, limit=None)\n--\n\n"
    "The caller's stack as the ir.Location MLIR's loc_tracebacks() would build (cached).\n"
    "source: a callsite.Filter (as filter=), or a callsite.Traceback captured earlier to\n"
    "render instead of the stack (trace, then emit), from the same caches.\n\n"
    R"doc(Raises:
    TypeError: ``source`` is not a Filter, a Traceback or None, as in
        ``mlir.location(3)``.
    ValueError: ``skip`` or ``limit`` is negative, as in ``mlir.location(skip=-1)``.

Example:
    ::

        import callsite, callsite.mlir
        from iree.compiler import ir

        with ir.Context(), ir.Location.unknown():
            print(callsite.mlir.location())                  # this line, as MLIR writes it
            traced = callsite.capture()                      # trace now...
            print(callsite.mlir.location(traced, limit=1))   # ...emit later
)doc"};

}  // namespace

void init_mlir(nb::module_ &parent) {
  nb::module_ m = parent.def_submodule("mlir", "MLIR locations (callsite.mlir).");
  m.attr("MlirBindings") = nb::handle(reinterpret_cast<PyObject *>(mlir::bindings_type));
  m.attr("MlirSettings") = nb::handle(reinterpret_cast<PyObject *>(mlir::settings_type));
  m.attr("_MethodInjector") = nb::handle(reinterpret_cast<PyObject *>(mlir::injector_type(true)));
  m.attr("_FunctionInjector") = nb::handle(reinterpret_cast<PyObject *>(mlir::injector_type(false)));
  m.attr("settings") = nb::handle(mlir::settings_var);
  PyObject *location = PyCFunction_NewEx(&location_def, nullptr, m.attr("__name__").ptr());
  if (!location) throw nb::python_error();
  m.attr("location") = nb::steal(location);
  m.def(
      "_set_bindings_detector",
      [](nb::handle fn) { mlir::set_bindings_detector(fn.is_none() ? nullptr : fn.ptr()); },
      nb::arg("detector").none(),
      "Registers what detects the bindings already imported (callsite.mlir.bindings).");
  m.def(
      "_boundary",
      [](nb::handle kernel, const char *argument) {
        PyObject *b = new_boundary(kernel.ptr(), argument);
        if (!b) throw nb::python_error();
        return nb::steal(b);
      },
      nb::arg("kernel"), nb::arg("argument"),
      "callsite.boundary(kernel), its errors naming the caller's argument.");
  m.def("sweep", &mlir::sweep,
        "Drops the location caches of contexts that only those caches keep alive.");
  m.def("clear_caches", &mlir::clear_all_caches, "Drops every MLIR location cache.");
  m.def("cache_count", &mlir::cache_count, "Number of per-context location caches.");
  m.def(
      "cache_info", [](nb::handle ctx) { return nb::steal(mlir::cache_info(ctx.ptr())); },
      nb::arg("context"), "Sizes and hit counts of one context's location cache, or None.");
}

}  // namespace callsite::bindings
