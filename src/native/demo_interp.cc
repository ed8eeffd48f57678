// native/demo_interp.cc — compiles the calc interpreter of examples/interp/ into _callsite, so
// `python -m callsite demo` and the tests can run it without building the example.
#include "native/demo_interp.h"

#include "../../examples/interp/interp.h"

namespace callsite::native {

PyTypeObject *calc_program_type() noexcept {
  return calc::make_program_type("callsite.native.CalcProgram");
}

}  // namespace callsite::native
