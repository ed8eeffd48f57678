// callsite/frame.h — the raw captured frame (16 bytes, POD, no strings, no frame objects) and
// the symbolized frame a consumer gets for it.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

namespace callsite {

struct Executable;  // native_frame.h

/// What a captured entry stands for.
enum class FrameKind : std::uint8_t {
  python = 0,  ///< a CPython code object + instruction offset
  native = 1,  ///< a native/JIT frame: an Executable + its opaque state, reified lazily
};

/// One captured frame. `tagged` is a `PyCodeObject*` (kind python) or an `Executable*` with
/// its low bit set (kind native); both are at least 8-byte aligned, so the bit is free.
/// `payload` is the instruction offset in bytes (as `frame.f_lasti`; -1 before the first
/// instruction) for Python frames, and the native frame's state for native ones.
struct RawFrame {
  std::uintptr_t tagged;  ///< `PyCodeObject*`, or `Executable*` | 1 for a native frame
  std::intptr_t payload;  ///< instruction offset in bytes (Python) or state (native)

  /// Python or native, from the low bit of `tagged`.
  FrameKind kind() const noexcept { return FrameKind(tagged & 1u); }
  /// True for a Python frame (`kind() == FrameKind::python`).
  bool is_python() const noexcept { return (tagged & 1u) == 0; }
  /// The code object (borrowed; the owning Traceback keeps it alive). Python frames only.
  void *code() const noexcept { return reinterpret_cast<void *>(tagged); }
  /// The executable of a native frame.
  const Executable *executable() const noexcept {
    return reinterpret_cast<const Executable *>(tagged & ~std::uintptr_t(1));
  }
  /// The instruction offset in bytes, as `frame.f_lasti`. Python frames only.
  int lasti() const noexcept { return int(payload); }
  /// The native frame's state. Native frames only.
  std::uintptr_t state() const noexcept { return std::uintptr_t(payload); }

  /// Same code (or executable) and same offset (or state).
  friend bool operator==(const RawFrame &a, const RawFrame &b) noexcept {
    return a.tagged == b.tagged && a.payload == b.payload;
  }
};
static_assert(sizeof(RawFrame) == 16, "RawFrame is two machine words");

/// A native frame as the stack walker sees it: the head of every `callsite::NativeFrame`,
/// linked per thread, innermost first. `marker` stands for the interpreter frame that was
/// current when it was pushed (an opaque value compared, never read; see src/layouts/layout.h).
struct NativeLink {
  const NativeLink *previous;    ///< the next outer native frame of the thread, or nullptr
  const void *marker;            ///< the interpreter frame current at the push (opaque)
  const Executable *executable;  ///< what the frame runs
  std::uintptr_t state;          ///< where it is (`NativeFrame::set_state`)
};

/// How many further states of one executable may be reified before a native frame's FrameInfo
/// (below) stops being valid: the size of a generation of the reification cache, which keeps
/// two. Part of the contract: a consumer may rely on it within an ABI major.
inline constexpr std::size_t kReifiedStatesKept = std::size_t(1) << 14;

/// A symbolized frame, with `traceback.FrameSummary`'s field names. Positions are as
/// `code.co_positions()` gives them (columns 0-based, end exclusive); -1 stands for None.
/// The objects are borrowed. A Python frame's come from its code object and live as long as
/// the Traceback or frame that holds the raw frame. A native frame's come from the
/// reification cache, which is bounded: they stay valid until kReifiedStatesKept other states
/// of the same executable have been reified (or the executable dies); take references to keep
/// them longer.
struct FrameInfo {
  FrameKind kind = FrameKind::python;  ///< which of the two the frame is
  PyObject *filename = nullptr;  ///< str
  PyObject *name = nullptr;      ///< str: co_name
  PyObject *qualname = nullptr;  ///< str: co_qualname (co_name on 3.10)
  PyObject *code = nullptr;      ///< the code object; for native frames the reified one or null
  int lineno = -1;      ///< first line of the instruction's range (1-based)
  int end_lineno = -1;  ///< last line of the range
  int colno = -1;       ///< first column (0-based)
  int end_colno = -1;   ///< end column (0-based, exclusive)
};

}  // namespace callsite
