// mlir/mlir_init.cc — the MLIR wing's init order (see mlir_init.h).
#include "mlir/mlir_init.h"

#include "mlir/bindings.h"
#include "mlir/bindings_type.h"
#include "mlir/build_python.h"
#include "mlir/context_cache.h"
#include "mlir/injector.h"
#include "mlir/settings.h"

namespace callsite::mlir {

bool init() {
  return init_settings() && init_build_python() && init_bindings() && init_injectors() &&
         init_context_caches() && init_bindings_type();
}

}  // namespace callsite::mlir
