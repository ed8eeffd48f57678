// capture/backend.h — which layout walks the stack, chosen once at import, switchable.
#pragma once
#include "layouts/layout.h"
#include "callsite/capture.h"

namespace callsite::detail {

/// The layout in use. Hot: read on every capture.
extern const callsite_layout *active_layout;

/// Picks the backend at module init: the internal layout unless it is refused (other minor
/// version, _Py_DebugOffsets mismatch, failed self-check) or CALLSITE_BACKEND=public. A refusal
/// is reported as a RuntimeWarning. Returns false with a Python error on hard failure.
bool init_backend() noexcept;

/// Why the internal layout is unavailable, or nullptr.
const char *internal_refusal() noexcept;

/// The calling thread's state (GIL held), without the fatal-error check of PyThreadState_Get.
PyThreadState *current_tstate() noexcept;

}  // namespace callsite::detail
