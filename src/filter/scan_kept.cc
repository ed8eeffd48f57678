// filter/scan_kept.cc — the first kept frames of growing stack prefixes.
#include "filter/scan_kept.h"

namespace callsite::detail {

std::size_t scan_kept(StackWalk &stack, FilterObject *f, std::size_t wanted,
                      std::size_t *kept) noexcept {
  std::size_t found = 0, i = 0;
  *kept = 0;
  if (wanted == 0) return 0;
  for (;;) {
    for (; i < stack.size(); ++i) {
      const bool boundary = stack.at_boundary() && i + 1 == stack.size();
      const int keep = boundary || !f ? 1 : keeps_raw(f, stack.data()[i]);
      if (keep < 0) return SIZE_MAX;
      if (keep && ++found == wanted) {
        *kept = found;
        return i + 1;
      }
    }
    const std::size_t scanned = stack.size();
    if (!stack.extend()) break;
    // The longer walk ended at an enclosing boundary among the frames already scanned (found
    // only once the walk is complete): its frame now counts as kept, so count again.
    if (stack.size() < scanned || (stack.at_boundary() && stack.size() == scanned))
      found = i = 0;
  }
  *kept = found;
  return stack.size();
}

}  // namespace callsite::detail
