// native/reifier_guard.cc — the calling thread's reifier guard.
#include "native/reifier_guard.h"

namespace callsite::native {
namespace {
// Trivially destructible (initial-exec TLS, as the shadow stack).
constinit thread_local ReifierGuard t_guard [[gnu::tls_model("initial-exec")]] = {{}, 0};
}  // namespace

ReifierGuard &reifier_guard() noexcept { return t_guard; }

}  // namespace callsite::native
