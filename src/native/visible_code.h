// native/visible_code.h — the synthetic code object of a visible executable: the k-th
// instruction after RESUME carries the location of state k, so readers that never call
// callsite (faulthandler, py-spy, a frame's f_lineno) find the line in the code object's own
// line table.
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/native_frame.h"

namespace callsite::native {

/// States one code object (shard) maps: within the line-table limits of out-of-process
/// readers (3.15's sampler: 65 536 entries; py-spy: about 60 KB of table) even in the
/// line-only form a shard falls back to when its columns would not fit kMaxShardTableBytes.
inline constexpr std::size_t kStatesPerShard = 8192;
inline constexpr std::size_t kMaxShardTableBytes = 48 * 1024;
/// States one executable may declare (its shards are built eagerly, on first use).
inline constexpr std::size_t kMaxVisibleStates = std::size_t(1) << 20;

/// What build_visible_code makes: the VisibleCode other extensions read (abi.h), followed by
/// what only callsite reads (every VisibleCode is made here, so the cast below is valid): the
/// guest function (guest_module.h) whose globals, builtins and function a frame runs with.
struct VisibleCodeBlock {
  VisibleCode shared;
  PyObject *function;
};

/// The guest function of frames of `code` (borrowed: the code holds it).
inline PyObject *guest_function_of_code(const VisibleCode *code) {
  return reinterpret_cast<const VisibleCodeBlock *>(code)->function;
}

/// Builds the code of `executable` for states [0, states), each reified through the
/// executable's reifier (and cache), kStatesPerShard states per code object; states whose
/// location is unknown or in another file than the first known one get "no location". A new
/// VisibleCode (owning its code objects) or nullptr + error (ValueError above
/// kMaxVisibleStates). GIL held.
VisibleCode *build_visible_code(const Executable *executable, std::size_t states);

/// The code a frame object keeps of a visible frame of `code` (a shard's) after the pop, when
/// it never runs again: the same instructions, lines and positions, its first line
/// guest_first_line() of the line `frame` (the frame object taken over, its frame still
/// current) is at (guest_module.h), so that inspect's block for it is the frame's own line or
/// refused (OSError), where a live frame's code must keep its first line at its first located
/// line (3.14+ instrumentation). Made on first use per (shard, first line), cached (bounded)
/// until the shard's code is released. A new reference, or nullptr + error. GIL held; may run
/// any code (linecache, tokenize).
PyObject *post_mortem_code(PyObject *code, PyFrameObject *frame);

/// Releases what build_visible_code made. GIL held.
void free_visible_code(VisibleCode *code) noexcept;

}  // namespace callsite::native
