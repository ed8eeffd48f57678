// bindings/submodules.h — one registration function per subsystem, called by module.cc.
#pragma once
#include <nanobind/nanobind.h>

namespace callsite::bindings {

void init_mlir(nanobind::module_ &m);      // bindings/mlir_submodule.cc
void init_tracking(nanobind::module_ &m);  // bindings/tracking_submodule.cc
void init_native(nanobind::module_ &m);    // bindings/native_submodule.cc

}  // namespace callsite::bindings
