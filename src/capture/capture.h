// capture/capture.h — capture the calling thread's stack as raw (code, lasti) frames.
#pragma once
#include <Python.h>

#include <cstddef>
#include <memory>
#include <new>

#include "callsite/frame.h"

namespace callsite {

/// Which walk produces the frames.
enum class Backend {
  internal,  ///< CPython's interpreter frames read directly (per-version layout)
  public_api ///< PyThreadState_GetFrame / PyFrame_GetBack; always available
};

/// Captures the calling thread's stack into `out` (innermost first), at most `capacity`
/// entries after dropping `skip` innermost frames; Python and native frames interleaved in
/// call order. Touches no refcount: the entries are borrowed and valid only while the frames
/// run. Returns the number of entries the stack had room for: a result > `capacity` means
/// `out` was too small (the first `capacity` entries are written). GIL held.
std::size_t capture_raw(RawFrame *out, std::size_t capacity, std::size_t skip = 0) noexcept;

/// The innermost `capacity` frames after `skip` (borrowed entries, as capture_raw), stopping
/// there: the rest of the stack is not walked. Fewer than `capacity` means the stack ended.
std::size_t walk_prefix(RawFrame *out, std::size_t capacity, std::size_t skip) noexcept;

/// First prefix length tried by the queries that stop at the first kept frames
/// (first_user_frame, capture(filter=, limit=)); each further try walks four times as many,
/// so a deep stack costs at most ~4/3 of one whole walk.
constexpr std::size_t kFirstPrefix = 16;

/// Captures into a new `callsite.Traceback` (a new reference, owning its code objects), at most
/// `limit` frames (SIZE_MAX: no limit). Returns nullptr with a Python error set on failure.
PyObject *capture(std::size_t skip = 0, std::size_t limit = SIZE_MAX) noexcept;

/// The backend in use, and switching it (false + reason when unavailable). GIL held.
Backend backend() noexcept;
bool set_backend(Backend which, const char **why_not = nullptr) noexcept;

/// The calling thread's stack after `skip`, borrowed as capture_raw() gives it, at any depth:
/// one walk into `N` entries held inline, a second one into the heap only when the stack is
/// deeper (for the queries that must see every frame: filters, MLIR locations).
template <std::size_t N>
class RawStack {
 public:
  explicit RawStack(std::size_t skip) noexcept {
    n_ = capture_raw(inline_, N, skip);
    if (n_ > N) [[unlikely]]
      walk_deep(skip);
  }
  RawStack(const RawStack &) = delete;
  RawStack &operator=(const RawStack &) = delete;

  const RawFrame *data() const noexcept { return frames_; }
  std::size_t size() const noexcept { return n_; }

 private:
  [[gnu::noinline]] void walk_deep(std::size_t skip) noexcept {
    for (std::size_t capacity = 0; n_ > capacity;) {
      capacity = n_ + 16;  // room for frames pushed between the walks
      heap_.reset(new (std::nothrow) RawFrame[capacity]);
      if (!heap_) {  // out of memory: the innermost frames that fit inline
        n_ = N;
        return;
      }
      n_ = capture_raw(heap_.get(), capacity, skip);
    }
    frames_ = heap_.get();
  }

  RawFrame inline_[N];
  std::unique_ptr<RawFrame[]> heap_;
  const RawFrame *frames_ = inline_;
  std::size_t n_;
};

}  // namespace callsite
