// python/init.cc — the init order of every type and cache (see init.h).
#include "python/init.h"

#include <Python.h>

#include "capture/backend.h"
#include "mlir/mlir_init.h"
#include "native/reify.h"
#include "python/boundary_type.h"
#include "python/daemon_exit.h"
#include "python/executable_type.h"
#include "python/filter_type.h"
#include "python/frame_type.h"
#include "python/native_frame_type.h"
#include "python/traceback_type.h"
#include "python/tracking_queries.h"
#include "symbolize/code_info.h"
#include "torch/torch_init.h"
#include "tracking/state.h"

namespace callsite::python {

bool init_types() {
  static bool done = false;
  if (done) return true;
  if (!detail::init_traceback_type() || !detail::init_frame_type() ||
      !detail::init_boundary_type())
    return false;
  // Without a co_extra index every lookup decodes the line table afresh: correct, slower.
  if (!detail::init_code_info() &&
      PyErr_WarnEx(PyExc_RuntimeWarning,
                   "callsite: no co_extra index left; line tables will be decoded on every use",
                   1) < 0)
    return false;
  if (!detail::init_filter_type()) return false;
  if (!tracking::detail::init() || !tracking::detail::init_call_site_type()) return false;
  if (!mlir::init() || !torch::init()) return false;
  if (!native::init_reify() || !native::init_executable_type() ||
      !native::init_native_frame_types())
    return false;
  done = true;
  return true;
}

bool init_module() {
  return install_daemon_exit_guard() && init_types() && detail::init_backend();
}

}  // namespace callsite::python
