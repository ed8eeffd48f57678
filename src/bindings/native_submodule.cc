// bindings/native_submodule.cc — registers the native-frame subsystem as
// callsite._callsite.native and the C API capsule callsite._callsite._C_API. No logic: the
// types live in src/python/ and src/native/.
#include "bindings/c_api.h"
#include "bindings/submodules.h"
#include "native/executable.h"
#include "native/frame_locals.h"
#include "native/greenlets.h"
#include "native/reify.h"
#include "native/visible_frames.h"
#include "python/native_frame_type.h"

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
  m.attr("_C_API") = checked(new_api_capsule());

  nb::module_ n = m.def_submodule("native", "Native and JIT frames.");
  n.attr("Executable") = nb::handle(reinterpret_cast<PyObject *>(native::executable_type));
  n.attr("NativeFrame") = nb::handle(reinterpret_cast<PyObject *>(native::native_frame_type));
  n.attr("FramedFunction") =
      nb::handle(reinterpret_cast<PyObject *>(native::framed_function_type));
  n.attr("ReificationWarning") = nb::handle(native::reification_warning);
  n.attr("FrameLocals") = nb::handle(reinterpret_cast<PyObject *>(native::frame_locals_type));
  n.def(
      "_set_warning_base",
      [n](nb::handle base) {
        if (!native::set_reification_warning_base(base.ptr()) ||
            PyObject_SetAttrString(n.ptr(), "ReificationWarning", native::reification_warning) < 0)
          throw nb::python_error();
      },
      nb::arg("base"),
      "Registers callsite.CallsiteWarning as ReificationWarning's base (at the package's "
      "import).");
  n.attr("current") = checked(PyCFunction_NewEx(&native::current_method, nullptr,
                                                 nb::str("callsite.native").ptr()));
  n.def("stack", [] { return checked(native::native_stack()); },
        "[(name, kind, state), ...]: the native frames a capture here would see, innermost "
        "first.");
  n.def("visible_frames_refusal", [] { return native::visible_refusal(); },
        "Why visible=True degrades to shadow-only frames here, or None when it does not.");
  n.def("_visible_heap_frames", [] { return native::visible_heap_frames(); },
        "Test hook: visible frames given heap memory because their thread's data stack chunk "
        "was full.");
  n.def("cache_info", [] { return checked(native::cache_info()); },
        "Reification cache counters: executables, entries, hits, misses.");
  n.def("track_greenlets", [] { if (!native::track_greenlets(true)) throw nb::python_error(); },
        "Makes native frames follow their greenlet on the calling thread (greenlet.settrace, "
        "chained). Automatic on the first frame pushed from Python in a thread and at import; "
        "call it in a thread whose frames are pushed from C++ only.");
  if (!native::track_greenlets(true)) throw nb::python_error();
}

}  // namespace callsite::bindings
