// bindings/native.cc — Python bindings of the native subsystem (placeholder until it lands).
#include "bindings/init.h"

namespace locus::bindings {

void init_native(nanobind::module_ &) {}

}  // namespace locus::bindings
