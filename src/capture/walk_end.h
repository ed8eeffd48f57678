// capture/walk_end.h — how a walk of the stack ended: the one type for it above the layouts
// (which report it as CALLSITE_WALK_*), kept by StackWalk, a Traceback, the filters and the
// MLIR lookups alike.
#pragma once
#include <cstdint>

#include "layouts/layout.h"

namespace callsite {

/// How a walk ended: the buffer filled first (truncated: walking again with a bigger one goes
/// further), the stack or the limit ended it (complete), or it stopped at a kernel boundary's
/// frame (at_boundary: the last entry is that frame, which filters keep whatever their rules
/// say). A Traceback's is complete or at_boundary.
enum class WalkEnd : std::uint8_t {
  truncated = CALLSITE_WALK_TRUNCATED,
  complete = CALLSITE_WALK_COMPLETE,
  at_boundary = CALLSITE_WALK_AT_STOP,
};

}  // namespace callsite
