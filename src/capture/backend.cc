// capture/backend.cc — backend selection and the internal layout's start-up self-check.
#include "capture/backend.h"

#include <cstdlib>
#include <cstring>

#include "capture/capture.h"
#include "core/compat.h"
#include "layouts/active.h"
#include "layouts/visible_frame.h"

namespace callsite::detail {

namespace {

const char *refusal = nullptr;

// The internal walk must see exactly the frames the public API sees on the stack we are
// imported from (importlib frames included). Any difference means the compiled layout does
// not describe this interpreter, whatever the version numbers say.
bool self_check(const callsite_layout *internal) {
  constexpr size_t kCap = 256;
  callsite_raw_frame a[kCap], b[kCap];
  callsite_walk_request ra{a, kCap, 0, SIZE_MAX, nullptr}, rb{b, kCap, 0, SIZE_MAX, nullptr};
  int ca = 0, cb = 0;
  PyThreadState *ts = compat::current_tstate();
  const size_t na = internal->walk(ts, &ra, &ca);
  const size_t nb = callsite_layout_public.walk(ts, &rb, &cb);
  return ca && cb && na == nb && na > 0 && std::memcmp(a, b, na * sizeof(a[0])) == 0 &&
         internal->current_marker(ts) == callsite_layout_public.current_marker(ts);
}

}  // namespace

const char *internal_refusal() noexcept { return refusal; }

bool init_backend() noexcept {
  const callsite_layout *internal = callsite_layout_internal();
  refusal = callsite_layout_internal_refusal();
#if CALLSITE_TESTING
  // Test builds only: lets the tests drive the refusal path a mismatched interpreter takes.
  if (const char *forced = std::getenv("CALLSITE_TEST_REFUSE_LAYOUT"); forced && *forced && internal)
    refusal = forced;
#endif
  if (!refusal && !self_check(internal))
    refusal = "the internal frame walk disagreed with the public C API at start-up";
  if (refusal) {
    callsite_visible_frames_refuse(refusal);  // same layouts: no visible frames either
    // callsite/__init__.py warns (callsite.BackendWarning, attributed to the importing line).
    callsite_active_layout = &callsite_layout_public;
    return true;
  }
  callsite_active_layout = internal;
  const char *env = std::getenv("CALLSITE_BACKEND");
  if (env && std::strcmp(env, "public") == 0) callsite_active_layout = &callsite_layout_public;
  return true;
}

}  // namespace callsite::detail

namespace callsite {

Backend backend() noexcept {
  return callsite_active_layout == &callsite_layout_public ? Backend::public_api : Backend::internal;
}

bool set_backend(Backend which, const char **why_not) noexcept {
  if (which == Backend::public_api) {
    callsite_active_layout = &callsite_layout_public;
    return true;
  }
  const callsite_layout *internal = callsite_layout_internal();
  const char *refused = internal ? detail::refusal : callsite_layout_internal_refusal();
  if (refused) {
    if (why_not) *why_not = refused;
    return false;
  }
  callsite_active_layout = internal;
  return true;
}

}  // namespace callsite
