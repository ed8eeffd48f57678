// bindings/filter.cc — Python bindings of the filter subsystem (placeholder until it lands).
#include "bindings/init.h"

namespace locus::bindings {

void init_filter(nanobind::module_ &) {}

}  // namespace locus::bindings
