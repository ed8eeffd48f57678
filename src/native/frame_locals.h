// native/frame_locals.h — a native frame's variables (a JIT's registers, a DSL interpreter's
// environment), produced by a locals reifier only when someone reads them.
#pragma once
#include <Python.h>

#include <atomic>
#include <cstdint>

#include "callsite/native_frame.h"

namespace callsite::native {

/// True once any executable or frame was given a locals reifier: until then a visible push
/// does not look further (one load and a branch). Atomic: a C++ frame may register its
/// reifier without the GIL.
extern std::atomic<bool> any_locals;

/// True when frames of `executable` (or the frame of `link`, when not null) have a locals
/// reifier. GIL held.
bool has_locals(const Executable *executable, const NativeLink *link) noexcept;

/// The variables of a frame of `executable` at `state` (of the frame `link`, whose own locals
/// reifier comes first, when not null): a new dict, {} when there is no reifier. A reifier
/// that raises an Exception, returns something that is not a mapping of str keys, or is
/// re-entered on this thread for the same executable (it read its own frame's locals) gives
/// {} and a ReificationWarning (once per executable, as a failing location reifier); the
/// re-entry guard is per greenlet (reifier_guard.h).
/// nullptr + error only when that warning was turned into an error or the reifier raised a
/// BaseException that is not an Exception. The reifier runs with the executable held (it may
/// run any code). GIL held; no exception set.
PyObject *read_locals(const Executable *executable, std::uintptr_t state,
                      const NativeLink *link);

/// True when `obj` can give a frame's variables: a mapping (not a str, bytes, tuple or list,
/// which also have __getitem__).
bool is_variables_mapping(PyObject *obj) noexcept;

/// The innermost frame of `executable` at `state` pushed on the calling thread that has its
/// own locals reifier (NativeFrameWithLocals, a Python frame handle's `locals`), or nullptr:
/// what a traceback entry added through the C API, which knows only (executable, state),
/// reads through. Only the calling thread's: another thread's C++ frame may pop (and its
/// context die) at any time. GIL held.
const NativeLink *registered_link(const Executable *executable, std::uintptr_t state) noexcept;

/// The calling thread's pushed frame of `executable` at `state` that is the `activation`-th
/// innermost of them (0: the innermost), or nullptr: the frame a capture's native entry stands
/// for while it still runs, when `activation` counts the capture's entries of the same
/// (executable, state) inner to it. GIL held.
const NativeLink *live_link(const Executable *executable, std::uintptr_t state,
                            std::size_t activation) noexcept;

/// api->set_locals: frames of `executable` get their variables from `fn(executable, state,
/// context)` (nullptr: none). 0, or -1 + error. GIL held.
int set_locals(const Executable *executable, LocalsReifier fn, void *context) noexcept;

/// api->set_frame_locals: the frame of `link` (pushed, on the calling thread) gets its
/// variables from `fn` before its executable's; nullptr forgets it (NativeFrame's pop does).
/// A visible frame (`slot`, may be null) gets the mapping its interpreter frame shows.
/// Touches no Python state, so the GIL is not needed (C++ frames are pushed and popped
/// without it): 0, or -1 when `link` is null or memory ran out (no Python error).
int set_frame_locals(NativeLink *link, VisibleSlot *slot, LocalsReifier fn,
                     void *context) noexcept;

/// set_frame_locals for a link that has no variables of its own yet (its pusher knows): the
/// entry is appended without looking for one, so that registering costs the same at any
/// depth of the thread's stack. 0, or -1 (null `link` or `fn`, or no memory).
int add_frame_locals(NativeLink *link, LocalsReifier fn, void *context) noexcept;

/// Drops what callsite keeps for an executable that is being destroyed. GIL held.
void forget_locals(const Executable *executable) noexcept;

/// The mapping a visible frame's interpreter frame holds in f_locals (CPython's frame.f_locals
/// returns it for the synthetic code, which is not CO_OPTIMIZED): it calls the locals
/// reifier of the frame `link` on each read while the frame is pushed, and shows what
/// freeze() kept after. New reference, or nullptr (no error: memory ran out, the frame then
/// shows {}). Allocates no GC generation's worth of work on 3.12+ (a collection is only
/// scheduled). GIL held.
PyObject *new_frame_locals(const NativeLink *link) noexcept;

/// The frame of `mapping` (a new_frame_locals result, or anything else: ignored) is popped:
/// when `keep` (a frame object outlives the pop, or someone holds the mapping) its variables
/// are read now, through the reifier, and kept; else it only forgets the frame. Keeps the
/// pending exception; a failure is reported through sys.unraisablehook. GIL held.
void freeze_frame_locals(PyObject *mapping, bool keep) noexcept;

/// Takes `mapping` (the frame's reference to it) as the spare for the next new_frame_locals
/// (one for the process) when it is a FrameLocals nobody else holds: true (the caller forgets
/// it), or false (nothing done). GIL held.
bool spare_frame_locals(PyObject *mapping) noexcept;

/// True when `obj` is a mapping made by new_frame_locals.
bool is_frame_locals(PyObject *obj) noexcept;

/// callsite.native.FrameLocals, made by init_frame_locals_type() (once, at init). Borrowed.
extern PyTypeObject *frame_locals_type;
PyTypeObject *init_frame_locals_type() noexcept;

}  // namespace callsite::native
