// capture/capture.h — capture the calling thread's stack as raw (code, lasti) frames.
#pragma once
#include <Python.h>

#include <cstddef>
#include <memory>

#include "callsite/frame.h"
#include "capture/walk_end.h"

namespace callsite {

/// Which walk produces the frames.
enum class Backend {
  internal,  ///< CPython's interpreter frames read directly (per-version layout)
  public_api ///< PyThreadState_GetFrame / PyFrame_GetBack; always available
};

/// Entries of a walk held on the C stack (8 KiB): all but pathological depths fit in one walk.
constexpr std::size_t kStackBuffer = 512;

/// First prefix length tried by the queries that stop at the first kept frames
/// (first_user_frame, capture(filter=, limit=)); each further try walks four times as many,
/// so a deep stack costs at most ~4/3 of one whole walk.
constexpr std::size_t kFirstPrefix = 16;

/// Captures the calling thread's stack into `out` (innermost first), at most `capacity`
/// entries after dropping `skip` innermost frames; Python and native frames interleaved in
/// call order, ending at the kernel boundary in force (capture/boundary.h). Touches no
/// refcount: the entries are borrowed and valid only while the frames run. Returns the number
/// of entries the stack had room for: a result > `capacity` means `out` was too small (the
/// first `capacity` entries are written). GIL held.
std::size_t capture_raw(RawFrame *out, std::size_t capacity, std::size_t skip = 0) noexcept;

/// Captures into a new `callsite.Traceback` (a new reference, owning its code objects), at most
/// `limit` frames (SIZE_MAX: no limit). Returns nullptr with a Python error set on failure.
PyObject *capture(std::size_t skip = 0, std::size_t limit = SIZE_MAX) noexcept;

/// The backend in use, and switching it (false + reason when unavailable). GIL held.
Backend backend() noexcept;
bool set_backend(Backend which, const char **why_not = nullptr) noexcept;

/// The one walker of prefixes: the calling thread's stack after `skip`, innermost first, as
/// borrowed entries (as capture_raw), at most `limit` of them, ending at the kernel boundary
/// in force. The constructor walks the first `first` frames; each extend() walks four times as
/// many (into the inline buffer while it fits, then the heap), until the stack, the limit or
/// the boundary ends it. Queries that stop early (the first kept frame) extend while they have
/// not found what they look for; the others call walk_all(). GIL held; no Python code may run
/// between a walk and the use of its entries, except code that returns to this same stack
/// (a reifier deciding a filter's keep): the walk holds the boundary chain it walks to.
class StackWalk {
 public:
  explicit StackWalk(std::size_t skip, std::size_t first = kStackBuffer,
                     std::size_t limit = SIZE_MAX) noexcept;
  ~StackWalk() {
    if (hold_) release_native_entries();
    Py_XDECREF(chain_);
  }
  StackWalk(const StackWalk &) = delete;
  StackWalk &operator=(const StackWalk &) = delete;

  /// Walks a prefix four times as long. False when the walk was already complete (nothing
  /// more to see), or memory ran out (the entries walked so far stay valid).
  bool extend() noexcept;
  /// Extends until complete: the whole stack (or up to the limit or boundary).
  StackWalk &walk_all() noexcept {
    while (extend()) {
    }
    return *this;
  }

  const RawFrame *data() const noexcept { return frames_; }
  std::size_t size() const noexcept { return n_; }
  /// From now on the native entries of the walk are retained (their executables' owners)
  /// until the next walk or the end of this object. A caller that runs Python code while it
  /// reads the entries calls it first: a native frame's reifier may pop the native frames
  /// below it and free their executables. Python entries need nothing: their code objects
  /// belong to frames still running.
  void hold_native_entries() noexcept {
    if (!hold_) retain_native_entries();
    hold_ = true;
  }
  /// How the walk ended: at_boundary when the last entry is the kernel boundary's frame
  /// (filters keep it whatever their rules say, filter/decisions.h).
  WalkEnd end() const noexcept { return end_; }
  /// Whether the walk saw the end of the stack, the limit or the boundary.
  bool complete() const noexcept { return end_ != WalkEnd::truncated; }
  /// Whether a kernel boundary is in force for this walk (it may not be on the stack).
  bool bounded() const noexcept { return chain_ != nullptr; }
  /// Whether one of the first `n` entries runs the kernel of a boundary enclosing the
  /// innermost one: until the walk is complete, that frame may or may not end the chain (it
  /// does unless the innermost boundary's kernel runs deeper), so a query that found what it
  /// looked for above it walks the rest first.
  bool enclosing_kernel_within(std::size_t n) const noexcept;

 private:
  void walk(std::size_t capacity) noexcept;
  void retain_native_entries() noexcept;
  void release_native_entries();

  std::size_t skip_, limit_, capacity_ = 0, n_ = 0;
  WalkEnd end_ = WalkEnd::truncated;
  bool hold_ = false;
  PyObject *chain_;  // the boundary chain (capture/boundary.h), held, or nullptr
  const RawFrame *frames_ = inline_;
  std::unique_ptr<RawFrame[]> heap_;
  RawFrame inline_[kStackBuffer];
};

}  // namespace callsite
