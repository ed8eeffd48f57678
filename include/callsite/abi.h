// callsite/abi.h — the binary contract between _callsite and the extension modules that push
// native frames: the capsule's function table, the layouts both sides read and write inline,
// and the version that says which table a provider has.
//
// Rules, as for any C ABI shared by separately built modules:
//   - The table only grows at its end: a new entry goes after the last one and raises
//     CALLSITE_ABI_MINOR; a provider's `size` says which entries it has.
//   - The structs below, and NativeLink and RawFrame (frame.h), keep their layout within a
//     major: a consumer's NativeFrame embeds NativeLink and VisibleSlot, so even their sizes
//     are shared. ThreadStack is the one open struct: only `head` is shared.
//   - Anything else (an entry's signature or meaning, a field's offset or size) raises
//     CALLSITE_ABI_MAJOR, and a consumer refuses a provider of another major (api::import()).
//   - tests/cpp/abi_test.cc freezes every offset: a change that moves one fails there first.
// User code does not need this header directly: native_frame.h and api.h include it.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/frame.h"

/// The table's `version`: an equal major is required of a provider.
#define CALLSITE_ABI_MAJOR 1
/// Entries appended since the major's first table (for a consumer's compile-time checks; at
/// run time the provider's `size` tells).
#define CALLSITE_ABI_MINOR 2

namespace callsite {

struct NativeLocation;  // native_frame.h

/// One synthetic code object of a visible executable: instruction `first_state + k` carries the
/// location of state `first + k` for k < `states`; `first_state + states` is "no location".
struct VisibleShard {
  PyObject *code;                   ///< the synthetic code object (owned by callsite)
  const std::uint16_t *first_state;  ///< the instruction of state `first`
  std::uintptr_t first;              ///< the first state it maps
  std::uintptr_t states;             ///< how many consecutive states it maps
};

/// The synthetic code objects that make frames of one executable visible to every reader of
/// the interpreter's frame chain (made by `api::visible_code`, owned by callsite). States are
/// split over shards of `states_per_shard` (state k is in shard k / states_per_shard), each
/// within what out-of-process readers accept of one code object's line table; a frame's code
/// is the shard of its state, and states from `states` on show "no location".
struct VisibleCode {
  std::uintptr_t states;            ///< states mapped in all
  std::uintptr_t states_per_shard;  ///< states each shard maps (the last may map fewer)
  std::uintptr_t shard_count;       ///< at least 1
  const VisibleShard *shards;       ///< `shard_count` shards, in state order
};

/// Where the interpreter frame of a visible NativeFrame lives while it is pushed.
struct VisibleSlot {
  void *frame;                 ///< nullptr: shadow-only
  const std::uint16_t **ip;    ///< its instruction pointer (set_state writes here)
  const VisibleShard *shard;   ///< the shard whose code the frame runs
  PyThreadState *thread;       ///< the thread state whose frame chain it is on
};

/// A thread's shadow stack: the innermost frame. Further fields are private to _callsite.
struct ThreadStack {
  NativeLink *head;  ///< the innermost native frame of the thread, or nullptr
};

/// The function table exported by _callsite as the capsule `callsite._callsite._C_API` (api.h).
/// Append only: a new entry goes after the last one and raises CALLSITE_ABI_MINOR.
struct NativeAPI {
  std::uint32_t version;  ///< CALLSITE_ABI_MAJOR of the provider
  std::uint32_t size;     ///< sizeof(NativeAPI) of the provider: which entries it has
  /// Fills `link` (previous, current Python frame marker, executable, state), links it as
  /// this thread's innermost frame and returns the thread's stack. No allocation, no GIL.
  ThreadStack *(*push)(NativeLink *link, const Executable *executable,
                       std::uintptr_t state) noexcept;
  /// Pops a frame that is not the innermost: aborts with a message when `checked`, else
  /// unlinks it wherever it is (a frame not on the stack is ignored).
  void (*misordered_pop)(ThreadStack *stack, NativeLink *link, int checked) noexcept;
  /// This thread's innermost frame (what a capture sees). GIL held.
  const NativeLink *(*innermost)() noexcept;
  /// callsite::capture: a new callsite.Traceback, or nullptr + error. GIL held.
  PyObject *(*capture)(std::size_t skip, std::size_t limit) noexcept;
  /// callsite::capture_raw: borrowed entries; returns the count the stack had. GIL held.
  std::size_t (*capture_raw)(RawFrame *out, std::size_t capacity, std::size_t skip) noexcept;
  /// callsite::symbolize (Python and native entries). 0, or -1 + error. GIL held.
  int (*symbolize)(const RawFrame *frame, FrameInfo *out);
  /// Prepends an entry for (executable, state) to the traceback of the exception being
  /// raised, as CPython's PyTraceBack_Here does for a Python frame. Never loses the original
  /// exception; returns 0, or -1 if no exception is set. GIL held.
  int (*add_traceback)(const Executable *executable, std::uintptr_t state);
  /// A callsite.native.Executable owning a C++ reifier: new reference, or nullptr + error.
  /// `free_user_data(user_data)` runs when the executable dies (may be nullptr).
  /// `reify` is a callsite::Reifier (native_frame.h), spelled out here.
  PyObject *(*new_executable)(const char *name, const char *kind,
                              int (*reify)(const Executable *, std::uintptr_t, NativeLocation *),
                              void *user_data, void (*free_user_data)(void *)) noexcept;
  /// The Executable inside a callsite.native.Executable, or nullptr + TypeError.
  const Executable *(*executable_of)(PyObject *obj) noexcept;
  /// The visible code of `executable` for states [0, states), reified through its reifier on
  /// first use and kept as long as the executable. nullptr without an error (after a
  /// RuntimeWarning) where this interpreter has no visible frames; nullptr + error on failure.
  const VisibleCode *(*visible_code)(const Executable *executable, std::size_t states);
  /// push, and a real interpreter frame of `code` at `state` linked on the calling thread
  /// (attached, GIL held) around the nested call the caller makes next. `thread` is the
  /// calling thread's state as PyThreadState_GetUnchecked() returns it (the caller reads it:
  /// then nothing the push keeps lives across a call). Fills `out` (out->frame nullptr:
  /// `thread` is nullptr or memory ran out, the frame is shadow-only).
  ThreadStack *(*push_visible)(PyThreadState *thread, NativeLink *link,
                               const Executable *executable, std::uintptr_t state,
                               const VisibleCode *code, VisibleSlot *out) noexcept;
  /// Pops a frame of push_visible: the interpreter frame of `slot` (when slot->frame is not
  /// nullptr), which must be its thread's current one (aborts with a message when `checked`,
  /// else leaves it linked), then `link` from `stack` as a plain pop does. Sets slot->frame
  /// to nullptr.
  void (*pop_visible)(ThreadStack *stack, NativeLink *link, VisibleSlot *slot,
                      int checked) noexcept;
  /// Moves the pushed visible frame of `slot` to `state` when the state is outside the shard
  /// its frame runs (NativeFrame::set_state's store covers the rest): switches the frame to
  /// the code of the state's shard, or points it at "no location" past `code->states`.
  void (*visible_set_state)(VisibleSlot *slot, const VisibleCode *code,
                            std::uintptr_t state) noexcept;
  // --- CALLSITE_ABI_MINOR 1 ---
  /// Opens a kernel boundary at `kernel` (a function, method or code object, or a wrapper of
  /// one through __wrapped__) for the calling thread and asyncio task: walks stop at its
  /// innermost frame. Returns the token that closes it (new reference), or nullptr + error.
  PyObject *(*open_boundary)(PyObject *kernel) noexcept;
  /// Closes exactly the boundary `token` opened (the others stay in force, whatever the
  /// order): 0, or -1 + error.
  int (*close_boundary)(PyObject *token) noexcept;
  // --- CALLSITE_ABI_MINOR 2 ---
  /// Gives frames of `executable` a locals reifier (a callsite::LocalsReifier, native_frame.h,
  /// spelled out here), called with `context` only when something reads a frame's variables;
  /// nullptr removes it. Registered before the executable's first visible push (its frames
  /// pushed earlier show none). 0, or -1 + error. GIL held.
  int (*set_locals)(const Executable *executable,
                    PyObject *(*fn)(const Executable *, std::uintptr_t, void *),
                    void *context) noexcept;
  /// The same for one pushed frame (`link`, on the calling thread; `slot` its visible slot or
  /// nullptr), before its executable's; nullptr forgets it (before `link` is reused).
  /// Touches no Python state when `slot` is nullptr: callable without the GIL, as push and
  /// pop are. 0, or -1 (null `link`, or out of memory) with no Python error set.
  int (*set_frame_locals)(NativeLink *link, VisibleSlot *slot,
                          PyObject *(*fn)(const Executable *, std::uintptr_t, void *),
                          void *context) noexcept;
};

namespace detail {
/// The table in use: set by _callsite when it loads, by `api::import()` in other extensions.
inline const NativeAPI *native_api = nullptr;

// The installed headers are compiled by other extensions, which cannot include callsite's
// core/compat.h: the public-API differences they need are here, and compat.h uses them too.

/// The calling thread's state, nullptr while it is detached (3.12+) or has none: 3.13's public
/// PyThreadState_GetUnchecked, _PyThreadState_UncheckedGet before (cpython/pystate.h).
inline PyThreadState *calling_thread() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return PyThreadState_GetUnchecked();
#else
  return _PyThreadState_UncheckedGet();
#endif
}

/// Sets the exception being raised (if any) aside for its scope, and puts it back at the end
/// over whatever the scope raised: an error the caller is propagating is never lost to a call
/// into callsite. PyErr_GetRaisedException / PyErr_SetRaisedException since 3.12 (which
/// deprecates PyErr_Fetch / PyErr_Restore), the triple before.
class ErrorSetAside {
 public:
  ErrorSetAside() noexcept {
#if PY_VERSION_HEX >= 0x030C0000
    exc_ = PyErr_GetRaisedException();
#else
    PyErr_Fetch(&type_, &value_, &traceback_);
#endif
  }
  ~ErrorSetAside() {
#if PY_VERSION_HEX >= 0x030C0000
    if (exc_) PyErr_SetRaisedException(exc_);
#else
    if (type_) PyErr_Restore(type_, value_, traceback_);
#endif
  }
  ErrorSetAside(const ErrorSetAside &) = delete;
  ErrorSetAside &operator=(const ErrorSetAside &) = delete;

 private:
#if PY_VERSION_HEX >= 0x030C0000
  PyObject *exc_;
#else
  PyObject *type_, *value_, *traceback_;
#endif
};
}  // namespace detail

}  // namespace callsite
