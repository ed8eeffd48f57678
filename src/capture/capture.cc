// capture/capture.cc — capture(): one walk, straight into the Traceback's storage when the
// depth matches the previous capture's size class, else through the one walker of prefixes
// (StackWalk) and a copy; one refcount write per run of equal code objects.
#include "capture/capture.h"

#include <cstring>
#include <new>

#include "capture/boundary.h"
#include "capture/traceback_pool.h"
#include "capture/traceback_storage.h"
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

// One walk of the active layout, interleaving the native frames from `native` on and ending at
// `stop` (nullptr: no boundary). Returns the entries written; *status is CALLSITE_WALK_*.
inline std::size_t walk_layout(const NativeLink *native, PyCodeObject *stop, RawFrame *out,
                               std::size_t capacity, std::size_t skip, std::size_t limit,
                               bool owned, int *status) {
  const callsite_walk_request req{reinterpret_cast<callsite_raw_frame *>(out),
                                  capacity,
                                  skip,
                                  limit,
                                  reinterpret_cast<const callsite_native_link *>(native),
                                  owned,
                                  stop};
  return callsite_active_layout->walk(compat::current_tstate(), &req, status);
}

// walk_layout from this thread's innermost native frame, ending at the kernel boundary of
// `chain` (capture/boundary.h): at its innermost kernel's code, or else at that kernel as a DSL
// rewrote it, or, when that kernel is not running, at an enclosing one's (the last two found
// in the entries, *status then CALLSITE_WALK_AT_STOP too).
inline std::size_t walk_bounded(PyObject *chain, RawFrame *out, std::size_t capacity,
                                std::size_t skip, std::size_t limit, int *status) {
  const std::size_t n = walk_layout(native::innermost(), innermost_boundary(chain), out,
                                    capacity, skip, limit, false, status);
  if (chain && *status != CALLSITE_WALK_AT_STOP) [[unlikely]]
    if (const std::size_t cut =
            boundary_cut(chain, out, n, *status == CALLSITE_WALK_COMPLETE)) {
      *status = CALLSITE_WALK_AT_STOP;
      return cut;
    }
  return n;
}

}  // namespace

StackWalk::StackWalk(std::size_t skip, std::size_t first, std::size_t limit) noexcept
    : skip_(skip), limit_(limit), chain_(Py_XNewRef(boundary_chain())) {
  walk(first < kStackBuffer ? first : kStackBuffer);
}

void StackWalk::walk(std::size_t capacity) noexcept {
  RawFrame *out = inline_;
  if (capacity > kStackBuffer) {
    RawFrame *bigger = new (std::nothrow) RawFrame[capacity];
    if (!bigger) {  // out of memory: keep the shorter prefix already walked
      end_ = WalkEnd::complete;
      return;
    }
    // Released before the old entries are overwritten or freed; dropping an executable may
    // run Python code, which is fine before the stack is read again (frames still running
    // hold their own executables).
    if (hold_) release_native_entries();
    heap_.reset(bigger);
    out = bigger;
  } else if (hold_) {
    release_native_entries();
  }
  int status = CALLSITE_WALK_TRUNCATED;
  n_ = walk_bounded(chain_, out, capacity, skip_, limit_, &status);
  frames_ = out;
  capacity_ = capacity;
  end_ = static_cast<WalkEnd>(status);
  if (hold_) retain_native_entries();
}

void StackWalk::retain_native_entries() noexcept {
  for (std::size_t i = 0; i < n_; ++i)
    if (!frames_[i].is_python()) detail::retain(frames_[i]);
}

void StackWalk::release_native_entries() {
  for (std::size_t i = 0; i < n_; ++i)
    if (!frames_[i].is_python()) detail::release(frames_[i]);
}

bool StackWalk::enclosing_kernel_within(std::size_t n) const noexcept {
  if (!chain_ || PyTuple_GET_ITEM(chain_, 1) == Py_None) return false;
  return boundary_cut(chain_, frames_, n < n_ ? n : n_, true) != 0;
}

bool StackWalk::extend() noexcept {
  if (complete()) return false;
  walk(capacity_ * 4);
  return true;
}

std::size_t capture_raw(RawFrame *out, std::size_t capacity, std::size_t skip) noexcept {
  int status = CALLSITE_WALK_TRUNCATED;
  const std::size_t n = walk_bounded(boundary_chain(), out, capacity, skip, SIZE_MAX, &status);
  if (status != CALLSITE_WALK_TRUNCATED) return n;
  // Count how many there were: the whole walk (deep stacks only).
  StackWalk all(skip);
  return all.walk_all().size();
}

namespace {

// Stacks of another size class than the previous capture's, or deeper than it: through the
// one walker, then copied into storage of the exact size (kept out of line: the common path
// builds no buffer).
[[gnu::noinline]] PyObject *capture_walked(std::size_t skip, std::size_t limit) noexcept {
  // Inside a boundary the limit leaves room for the kernel's frame, kept last as filters keep
  // it: the walk goes to the kernel (which bounds it) and keeps the limit - 1 innermost
  // entries and the kernel's.
  const bool bounded = boundary_chain() != nullptr;
  StackWalk stack(skip, kStackBuffer, bounded ? SIZE_MAX : limit);
  stack.walk_all();
  std::size_t n = stack.size();
  PyObject *tb = nullptr;
  const WalkEnd end = stack.end();
  if (n > limit && end == WalkEnd::at_boundary && limit > 0) {
    std::unique_ptr<RawFrame[]> kept(new (std::nothrow) RawFrame[limit]);
    if (!kept) return PyErr_NoMemory();
    std::memcpy(kept.get(), stack.data(), (limit - 1) * sizeof(RawFrame));
    kept[limit - 1] = stack.data()[n - 1];
    tb = new_traceback(kept.get(), limit);
  } else {
    if (n > limit) n = limit;
    tb = new_traceback(stack.data(), n);
  }
  if (tb && end == WalkEnd::at_boundary && n == stack.size()) detail::set_end(tb, end);
  return tb;
}

// The depth of the previous capture (GIL-protected). The next capture walks straight into
// storage of that size class, which saves copying out of a stack buffer whenever the depth
// stays within the class — the common case of a compiler capturing op after op from one
// region of code. A miss costs a walk of at most the class capacity before the other path.
Py_ssize_t recent_depth = 16;

}  // namespace

PyObject *capture(std::size_t skip, std::size_t limit) noexcept {
  // Inside a kernel boundary the walk is short by design: the walker's path, out of line, so
  // the common path below is the one it was without boundaries (a load and a branch more).
  if (boundary_chain()) [[unlikely]]
    return capture_walked(skip, limit);
  const NativeLink *native = native::innermost();
  detail::TracebackObject *tb = detail::take_traceback_storage(recent_depth);
  if (!tb) return nullptr;
  const std::size_t capacity = tb->capacity;
  int status = CALLSITE_WALK_TRUNCATED;
  const std::size_t n =
      walk_layout(native, nullptr, tb->frames, capacity, skip, limit, true, &status);
  if (status && detail::traceback_capacity_for(Py_ssize_t(n)) == capacity) {
    Py_SET_SIZE(tb, Py_ssize_t(n));
    if (native) detail::retain_native_entries(tb);
    return reinterpret_cast<PyObject *>(tb);
  }
  // Another size class: copy into storage of the right one (or take the walker's path when
  // the stack did not fit), and hand this block back with no entries.
  PyObject *result = nullptr;
  if (status)
    result = detail::adopt_traceback(tb->frames, Py_ssize_t(n), native != nullptr);
  else
    detail::release_code_refs(tb->frames, n);
  Py_SET_SIZE(tb, 0);
  Py_DECREF(reinterpret_cast<PyObject *>(tb));
  if (!status) result = capture_walked(skip, limit);
  if (result) recent_depth = Py_SIZE(result);
  return result;
}

}  // namespace callsite
