// native/reifier_guard.h — the executables whose locals reifiers are running in the calling
// greenlet (the calling thread's running greenlet, or the thread itself): how a reifier that
// reads its own executable's frames is refused instead of recursing.
#pragma once

#include "callsite/native_frame.h"

namespace callsite::native {

/// Reifiers running in one greenlet, innermost last. Trivially copyable: a greenlet switch
/// saves the outgoing greenlet's and restores the incoming one's (greenlets.cc), as it does
/// for the shadow stack's top, so a greenlet suspended inside a reifier leaves nothing behind
/// for the others.
struct ReifierGuard {
  static constexpr int kDepth = 16;
  const Executable *running[kDepth];
  int depth;

  /// True when a reifier of `executable` runs in this greenlet, or kDepth reifiers do.
  bool refuses(const Executable *executable) const noexcept {
    if (depth >= kDepth) return true;  // deeper: refused as a re-entry
    for (int i = 0; i < depth; ++i)
      if (running[i] == executable) return true;
    return false;
  }
};

/// The calling thread's guard (its running greenlet's). GIL held.
ReifierGuard &reifier_guard() noexcept;

}  // namespace callsite::native
