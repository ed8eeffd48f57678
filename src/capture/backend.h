// capture/backend.h — which layout walks the stack (layouts/active.h), chosen once at import,
// switchable.
#pragma once

namespace callsite::detail {

/// Picks the backend at module init: the internal layout unless it is refused (other minor
/// version, _Py_DebugOffsets mismatch, failed self-check) or CALLSITE_BACKEND=public. A refusal
/// is reported as a RuntimeWarning. Returns false with a Python error on hard failure.
bool init_backend() noexcept;

/// Why the internal layout is unavailable, or nullptr.
const char *internal_refusal() noexcept;

}  // namespace callsite::detail
