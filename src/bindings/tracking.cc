// bindings/tracking.cc — Python bindings of the tracking subsystem (placeholder until it lands).
#include "bindings/init.h"

namespace locus::bindings {

void init_tracking(nanobind::module_ &) {}

}  // namespace locus::bindings
