// native/demo_interp.cc — compiles the calc interpreter of examples/interp/ into _locus, so
// `python -m locus demo` and the tests can run it without building the example.
#include "native/demo_interp.h"

#include "../../examples/interp/interp.h"

namespace locus::native {

PyTypeObject *calc_program_type() noexcept {
  return calc::make_program_type("locus.native.CalcProgram");
}

}  // namespace locus::native
