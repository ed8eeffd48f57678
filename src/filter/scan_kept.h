// filter/scan_kept.h — the one scan of growing stack prefixes for the first kept frames
// (capture(filter=, limit=), Filter.first_user_frame()).
#pragma once
#include <cstddef>

#include "capture/capture.h"
#include "filter/decisions.h"

namespace callsite::detail {

/// Extends `stack` until it holds `wanted` frames that `f` keeps (every frame when `f` is
/// nullptr), or is complete. The kernel boundary's frame (the last entry when stack.end() is
/// WalkEnd::at_boundary) counts as kept whatever the rules say. Returns the number of entries up to and including
/// the wanted-th kept frame, with *kept = wanted; when the stack holds fewer, stack.size() and
/// *kept the number found. SIZE_MAX with a Python error set when a decision fails. A decision
/// may run Python code (a native frame's reifier): `stack` holds what its entries need.
/// `out` (room for `wanted` frames, or nullptr) receives the kept frames as counted, innermost
/// first: the first *kept ones are valid on return.
std::size_t scan_kept(StackWalk &stack, FilterObject *f, std::size_t wanted, std::size_t *kept,
                      RawFrame *out = nullptr) noexcept;

}  // namespace callsite::detail
