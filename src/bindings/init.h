// bindings/init.h — one registration function per subsystem, called by module.cc.
#pragma once
#include <nanobind/nanobind.h>

namespace callsite::bindings {

void init_filter(nanobind::module_ &m);    // bindings/filter.cc   (issue 4)
void init_mlir(nanobind::module_ &m);      // bindings/mlir.cc     (issue 4)
void init_tracking(nanobind::module_ &m);  // bindings/tracking.cc (issue 5)
void init_native(nanobind::module_ &m);    // bindings/native.cc   (issue 6)

}  // namespace callsite::bindings
