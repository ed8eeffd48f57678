// bindings/mlir.cc — Python bindings of the mlir subsystem (placeholder until it lands).
#include "bindings/init.h"

namespace locus::bindings {

void init_mlir(nanobind::module_ &) {}

}  // namespace locus::bindings
