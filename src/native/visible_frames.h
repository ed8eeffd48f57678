// native/visible_frames.h — native frames that are also real interpreter frames (opt-in):
// the synthetic code per executable and the frame blocks pushed around nested calls from C.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/native_frame.h"
#include "native/executable.h"

namespace callsite::native {

/// Why this interpreter has no visible frames, or nullptr when it has them.
const char *visible_refusal() noexcept;

/// api->visible_code: the code of `executable` for `states` states, built on first use and
/// kept as long as the executable (static executables: for the process). nullptr without an
/// error when this interpreter has no visible frames (after one RuntimeWarning per process);
/// nullptr + error on failure. GIL held.
const VisibleCode *visible_code(const Executable *executable, std::size_t states);

/// The visible code of a visible callsite.native.Executable, building it on first use;
/// nullptr when the executable is shadow-only, visible frames are unavailable, or (with an
/// error) it failed. GIL held.
const VisibleCode *visible_code_of(ExecutableObject *exe);

/// How many visible frames were given heap memory because the data stack chunk of their
/// thread was full when they were pushed (for tests of that path). GIL held.
std::size_t visible_heap_frames() noexcept;

/// Drops the code of an executable that is being destroyed. GIL held.
void forget_visible(const Executable *executable) noexcept;

/// api->push_visible: push (shadow_stack.h), and a real interpreter frame of `code` at
/// `state` linked as the current frame of `thread`, the calling thread's state
/// (compat::current_tstate()); out->frame is nullptr when `thread` is nullptr (not attached)
/// or no memory is left (the frame is then shadow-only).
ThreadStack *push_visible(PyThreadState *thread, NativeLink *link, const Executable *executable,
                          std::uintptr_t state, const VisibleCode *code,
                          VisibleSlot *out) noexcept;

/// Links only the interpreter frame (the shadow link `link`, may be null, is pushed by the
/// caller) into `out`: false (out->frame nullptr) when the thread is not attached or no
/// memory is left. A frame with a locals reifier shows its variables through `link`. GIL held.
bool push_interpreter_frame(const VisibleCode *code, std::uintptr_t state, VisibleSlot *out,
                            const NativeLink *link = nullptr) noexcept;

/// api->visible_set_state: moves a pushed visible frame to `state`, switching its code when
/// the state is in another shard. GIL held, on the pushing thread.
void visible_set_state(VisibleSlot *slot, const VisibleCode *code,
                       std::uintptr_t state) noexcept;

/// Unlinks the interpreter frame of `slot` (none: nothing to do), which must be its thread's
/// current interpreter frame (strict LIFO on the pushing thread, GIL held); otherwise aborts
/// with a message when `checked`, else leaves the frame linked (its memory stays until the
/// frames below it return). Sets slot->frame to nullptr.
void pop_interpreter_frame(VisibleSlot *slot, int checked) noexcept;

/// api->pop_visible: pop_interpreter_frame(slot), then the shadow link as NativeFrame::pop
/// does.
void pop_visible(ThreadStack *stack, NativeLink *link, VisibleSlot *slot, int checked) noexcept;

/// api->set_frame_locals: set_frame_locals (frame_locals.h), and the FrameLocals of the
/// visible frame of `slot` when it has none yet.
int api_set_frame_locals(NativeLink *link, VisibleSlot *slot, LocalsReifier fn,
                         void *context) noexcept;

/// api_set_frame_locals; `fresh`: `link` has no variables of its own yet (its pusher knows),
/// so that none is looked for (add_frame_locals). 0, or -1 when memory ran out.
int register_frame_locals(NativeLink *link, VisibleSlot *slot, LocalsReifier fn, void *context,
                          bool fresh) noexcept;

/// Adds the current (visible) frame to the traceback of the exception being raised, as the
/// eval loop does for a Python frame. GIL held.
void visible_traceback_here() noexcept;

}  // namespace callsite::native
