// capture/capture.cc — capture(): one walk, straight into the Traceback's storage when the
// depth matches the previous capture's size class, else into a stack buffer that is copied;
// one refcount write per run of equal code objects. Deep stacks (more than kStackBuffer
// frames) retry into a growing heap buffer.
#include "capture/capture.h"

#include <cstring>
#include <vector>

#include "capture/traceback_storage.h"
#include "capture/traceback_pool.h"
#include "core/compat.h"
#include "core/frame_refs.h"
#include "layouts/active.h"
#include "native/shadow_stack.h"

static_assert(sizeof(callsite::RawFrame) == sizeof(callsite_raw_frame) &&
                  offsetof(callsite_raw_frame, payload) == offsetof(callsite::RawFrame, payload),
              "RawFrame must match the C layout interface");
static_assert(sizeof(callsite::NativeLink) == sizeof(callsite_native_link) &&
                  offsetof(callsite_native_link, state) == offsetof(callsite::NativeLink, state),
              "NativeLink must match the C layout interface");

namespace callsite {
namespace {

// 512 entries (8 KiB of C stack) cover all but pathological depths in one walk.
constexpr std::size_t kStackBuffer = 512;

// One walk of the active layout, interleaving the native frames from `native` on.
inline std::size_t walk_from(const NativeLink *native, RawFrame *out, std::size_t capacity,
                             std::size_t skip, std::size_t limit, bool owned, int *complete) {
  const callsite_walk_request req{reinterpret_cast<callsite_raw_frame *>(out), capacity, skip, limit,
                               reinterpret_cast<const callsite_native_link *>(native), owned};
  return callsite_active_layout->walk(compat::current_tstate(), &req, complete);
}

inline std::size_t walk(RawFrame *out, std::size_t capacity, std::size_t skip, std::size_t limit,
                        bool owned, int *complete) {
  return walk_from(native::innermost(), out, capacity, skip, limit, owned, complete);
}

// Walks into `small` if it fits, else into `big` (growing); returns the frames and their
// count. With `owned`, the returned entries own a reference to their code objects.
const RawFrame *walk_any_depth(RawFrame *small, std::vector<RawFrame> &big, std::size_t skip,
                               std::size_t limit, bool owned, std::size_t *n) {
  int complete = 0;
  *n = walk(small, kStackBuffer, skip, limit, owned, &complete);
  if (complete) return small;
  if (owned) detail::release_code_refs(small, *n);
  for (std::size_t cap = kStackBuffer * 4;; cap *= 4) {
    big.resize(cap);
    *n = walk(big.data(), cap, skip, limit, owned, &complete);
    if (complete) return big.data();
    if (owned) detail::release_code_refs(big.data(), *n);
  }
}

}  // namespace

std::size_t walk_prefix(RawFrame *out, std::size_t capacity, std::size_t skip) noexcept {
  int complete = 0;
  return walk(out, capacity, skip, capacity, false, &complete);
}

std::size_t capture_raw(RawFrame *out, std::size_t capacity, std::size_t skip) noexcept {
  int complete = 0;
  std::size_t n = walk(out, capacity, skip, SIZE_MAX, false, &complete);
  if (complete) return n;
  // Count how many there were: walk again with room for all (deep stacks only).
  std::vector<RawFrame> all;
  RawFrame small[kStackBuffer];
  walk_any_depth(small, all, skip, SIZE_MAX, false, &n);
  return n;
}

namespace {

// Stacks deeper than the stack buffer: kept out of line so the common path builds no vector.
[[gnu::noinline]] PyObject *capture_deep(std::size_t skip, std::size_t limit) noexcept {
  RawFrame small[kStackBuffer];
  std::vector<RawFrame> big;
  std::size_t n = 0;
  const RawFrame *frames = walk_any_depth(small, big, skip, limit, true, &n);
  return detail::adopt_traceback(frames, Py_ssize_t(n), native::innermost() != nullptr);
}

}  // namespace

namespace {

// Walks into a stack buffer and copies into storage of the exact size class.
PyObject *capture_via_buffer(std::size_t skip, std::size_t limit,
                             const NativeLink *native) noexcept {
  RawFrame small[kStackBuffer];
  int complete = 0;
  const std::size_t n = walk_from(native, small, kStackBuffer, skip, limit, true, &complete);
  if (complete) return detail::adopt_traceback(small, Py_ssize_t(n), native != nullptr);
  detail::release_code_refs(small, n);
  return capture_deep(skip, limit);
}

// The depth of the previous capture (GIL-protected). The next capture walks straight into
// storage of that size class, which saves copying out of a stack buffer whenever the depth
// stays within the class — the common case of a compiler capturing op after op from one
// region of code. A miss costs a walk of at most the class capacity before the buffered path.
Py_ssize_t recent_depth = 16;

}  // namespace

PyObject *capture(std::size_t skip, std::size_t limit) noexcept {
  const NativeLink *native = native::innermost();
  detail::TracebackObject *tb = detail::take_traceback_storage(recent_depth);
  if (!tb) return nullptr;
  const std::size_t capacity = tb->capacity;
  int complete = 0;
  const std::size_t n = walk_from(native, tb->frames, capacity, skip, limit, true, &complete);
  if (complete && detail::traceback_capacity_for(Py_ssize_t(n)) == capacity) {
    Py_SET_SIZE(tb, Py_ssize_t(n));
    if (native) detail::retain_native_entries(tb);
    return reinterpret_cast<PyObject *>(tb);
  }
  // Another size class: copy into storage of the right one (or walk again, when the stack
  // did not fit), and hand this block back with no entries.
  PyObject *result = nullptr;
  if (complete)
    result = detail::adopt_traceback(tb->frames, Py_ssize_t(n), native != nullptr);
  else
    detail::release_code_refs(tb->frames, n);
  Py_SET_SIZE(tb, 0);
  Py_DECREF(reinterpret_cast<PyObject *>(tb));
  if (!complete) result = capture_via_buffer(skip, limit, native);
  if (result) recent_depth = Py_SIZE(result);
  return result;
}

}  // namespace callsite
