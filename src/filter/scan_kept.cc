// filter/scan_kept.cc — the first kept frames of growing stack prefixes.
#include "filter/scan_kept.h"

#include "native/shadow_stack.h"

namespace callsite::detail {

std::size_t scan_kept(StackWalk &stack, FilterObject *f, std::size_t wanted, std::size_t *kept,
                      RawFrame *out) noexcept {
  std::size_t found = 0, i = 0;
  *kept = 0;
  if (wanted == 0) return 0;
  // The decisions below may run reifiers, which may pop native frames: the walk's native
  // entries are held. It has some only when this thread has native frames (no Python code ran
  // since the walk).
  if (native::innermost()) stack.hold_native_entries();
  for (;;) {
    // Read once per walk: the decisions run code the compiler cannot see through, after which
    // it would load them again per frame.
    const RawFrame *const frames = stack.data();
    const std::size_t size = stack.size();
    const std::size_t boundary = stack.end() == WalkEnd::at_boundary ? size - 1 : SIZE_MAX;
    for (; i < size; ++i) {
      const int keep = i == boundary || !f ? 1 : keeps(f, frames[i]);
      if (keep < 0) return SIZE_MAX;
      if (!keep) continue;
      if (out) out[found] = frames[i];
      if (++found == wanted) {
        if (!stack.complete() && stack.bounded() && stack.enclosing_kernel_within(i + 1))
          break;  // see below
        *kept = found;
        return i + 1;
      }
    }
    if (found == wanted) {
      // Found above an enclosing boundary's kernel before the walk was complete: whether that
      // frame ends the chain is known once it is. Walk the rest and count again.
      stack.walk_all();
      found = i = 0;
      continue;
    }
    const std::size_t scanned = stack.size();
    if (!stack.extend()) break;
    // The longer walk ended at an enclosing boundary among the frames already scanned (found
    // only once the walk is complete): its frame now counts as kept, so count again.
    if (stack.size() < scanned ||
        (stack.end() == WalkEnd::at_boundary && stack.size() == scanned))
      found = i = 0;
  }
  *kept = found;
  return stack.size();
}

}  // namespace callsite::detail
