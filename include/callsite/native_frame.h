// callsite/native_frame.h — lightweight native/JIT frames: pushed cheaply, reified only on demand.
//
// A compiler, interpreter or JIT written in C++ describes each kind of code it runs with a
// static `callsite::Executable` (name, kind, reifier) and pushes a `callsite::NativeFrame` for each
// activation, with an opaque state (program counter, IR op id) it updates as it runs. The
// frames appear, in call order, in every `callsite.capture()` and (through `add_traceback()`) in
// Python exception tracebacks. The reifier turns (executable, state) into a source location
// only when someone symbolizes the frame; the result is cached per (executable, state).
//
// The same header serves the _callsite module itself and OTHER extension modules: the shadow
// stack lives in _callsite, reached through the function table of callsite/abi.h (see
// callsite/api.h for how an extension obtains it: `callsite::api::import()` once at module
// init). This header holds what user code names: locations, reifiers, executables, frames.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/abi.h"
#include "callsite/frame.h"

/// Out-of-order pops abort with a message when 1 (default in builds without NDEBUG, as
/// assert() does); when 0 the frame is unlinked wherever it is and the stack stays valid.
#ifndef CALLSITE_NATIVE_CHECKS
#ifdef NDEBUG
#define CALLSITE_NATIVE_CHECKS 0
#else
#define CALLSITE_NATIVE_CHECKS 1
#endif
#endif

namespace callsite {

/// What a reifier produces. Strings are UTF-8 and copied by callsite before the reifier's next
/// call (they may point into the reifier's own buffers). -1 stands for "unknown".
struct NativeLocation {
  const char *filename = nullptr;  ///< required: the DSL/JIT source file (or "<generated>")
  const char *name = nullptr;      ///< default: the executable's name
  const char *qualname = nullptr;  ///< default: name
  int lineno = -1;      ///< first line (1-based)
  int end_lineno = -1;  ///< last line
  int colno = -1;       ///< first column (0-based)
  int end_colno = -1;   ///< end column (0-based, exclusive)
  PyObject *code = nullptr;  ///< optional NEW reference to a real code object (introspection)
};

/// Turns (executable, state) into a location. Returns 0 on success, -1 on failure (with or
/// without a Python error set): callsite then warns once per executable and shows a placeholder.
/// Called with the GIL held, lazily, at most once per (executable, state) while cached.
/// Not `noexcept`, and neither are the table entries that may run one (symbolize,
/// add_traceback): a reifier may call into Python, and before 3.14 CPython ends a daemon thread
/// that waits for the GIL during interpreter finalization with pthread_exit, whose forced unwind
/// must pass every C++ frame on the way out (a `noexcept` frame would call std::terminate).
using Reifier = int (*)(const struct Executable *executable, std::uintptr_t state,
                        NativeLocation *out);

/// The variables of a frame of `executable` at `state` (a JIT's registers, a DSL interpreter's
/// environment): a NEW reference to a mapping of str names to values, or nullptr with a Python
/// error set. Called with the GIL held, only when something reads the frame's variables (a
/// visible frame's `frame.f_locals`, a traceback's frame after an exception passed the frame,
/// `callsite.Frame.locals`), possibly from another thread than the frame's (see
/// docs/native.md). A failure gives the frame no variables and a ReificationWarning, once per
/// executable. `context` is what was registered with it (`api::set_locals`,
/// `NativeFrame::set_locals`).
using LocalsReifier = PyObject *(*)(const struct Executable *executable, std::uintptr_t state,
                                    void *context);

/// One kind of native code. Usually a `static const` (nothing to manage); executables created
/// at run time should be made by callsite (`api::new_executable`), which refcounts them through
/// `owner` so Tracebacks holding their frames keep them (and `user_data`) alive.
struct Executable {
  const char *name;              ///< UTF-8, e.g. the kernel or interpreted function name
  const char *kind;              ///< UTF-8, e.g. "jit", "interpreter"
  Reifier reify;                 ///< may be nullptr: frames then show a placeholder
  void *user_data = nullptr;     ///< for the reifier
  PyObject *owner = nullptr;     ///< set by callsite for executables it owns; nullptr if static
};

/// An active native frame (RAII): pushed by the constructor, popped by the destructor, on the
/// calling thread; create it on the C++ stack of the activation it describes. Frames must be
/// popped in reverse order of pushing (see CALLSITE_NATIVE_CHECKS) and on the pushing thread.
class NativeFrame {
 public:
  /// Pushes a frame of `executable` at `state` on the calling thread (a no-op frame when
  /// `api::import()` has not succeeded in this module).
  explicit NativeFrame(const Executable &executable, std::uintptr_t state = 0) noexcept {
    const NativeAPI *api = detail::native_api;
    stack_ = api ? api->push(&link_, &executable, state) : nullptr;  // no callsite: a no-op frame
    if (!stack_) link_ = NativeLink{nullptr, nullptr, &executable, state};
    slot_ = VisibleSlot{nullptr, nullptr, nullptr, nullptr};
    visible_ = nullptr;
  }
  /// A frame that is also a real interpreter frame when `visible` is not null (see
  /// `api::visible_code`): sys._getframe, tracebacks, faulthandler and profilers show it at the
  /// location of its state. Only for a frame around a nested call made from C on a thread
  /// holding the GIL, popped before returning (strictly LIFO with the interpreter's frames).
  NativeFrame(const Executable &executable, std::uintptr_t state,
              const VisibleCode *visible) noexcept {
    const NativeAPI *api = detail::native_api;
    if (!api) {
      stack_ = nullptr;
      link_ = NativeLink{nullptr, nullptr, &executable, state};
      slot_.frame = nullptr;
    } else if (!visible) {
      stack_ = api->push(&link_, &executable, state);
      slot_.frame = nullptr;
    } else {  // fills slot_
      stack_ = api->push_visible(detail::calling_thread(), &link_, &executable, state, visible,
                                 &slot_);
      visible_ = visible;
    }
  }
  ~NativeFrame() { pop(); }
  NativeFrame(const NativeFrame &) = delete;
  NativeFrame &operator=(const NativeFrame &) = delete;

  /// Updates where the frame is (a store: call it as often as the JIT likes; a visible frame
  /// makes one call when the state leaves its shard's range). For a visible frame, call it
  /// while the frame is the running one (not from inside a callee it called): 3.15's
  /// frame-caching sampler re-reads the frames below the running one only when they change
  /// through the Python `frame.state` setter or a shard switch.
  void set_state(std::uintptr_t state) noexcept {
    link_.state = state;
    if (slot_.frame) {
      const VisibleShard *shard = slot_.shard;
      const std::uintptr_t k = state - shard->first;  // wraps below the shard
      if (k < shard->states) [[likely]]
        *slot_.ip = shard->first_state + k;
      else
        detail::native_api->visible_set_state(&slot_, visible_, state);
    }
  }
  /// True when this frame is also a real interpreter frame.
  bool visible() const noexcept { return slot_.frame != nullptr; }
  /// The state last set.
  std::uintptr_t state() const noexcept { return link_.state; }
  /// What the frame runs.
  const Executable &executable() const noexcept { return *link_.executable; }
  /// The frame's link in the thread's shadow stack (what a capture reads).
  const NativeLink &link() const noexcept { return link_; }

  /// Adds this frame (at its current state) to the traceback of the exception being raised:
  /// call it on the error path, before returning nullptr to Python. Returns nullptr, so
  /// `return frame.add_traceback();` reads naturally. GIL held.
  PyObject *add_traceback() const {
    if (slot_.frame) {  // the real frame, as the eval loop adds a Python frame's entry
      if (PyErr_Occurred())
        if (PyFrameObject *f = PyEval_GetFrame()) PyTraceBack_Here(f);
      return nullptr;
    }
    if (const NativeAPI *api = detail::native_api)
      api->add_traceback(link_.executable, link_.state);
    return nullptr;
  }

  /// Pops now instead of at scope exit (idempotent).
  void pop() noexcept {
    if (slot_.frame) {
      detail::native_api->pop_visible(stack_, &link_, &slot_, CALLSITE_NATIVE_CHECKS);
      stack_ = nullptr;
      return;
    }
    if (!stack_) return;
    if (stack_->head == &link_)
      stack_->head = const_cast<NativeLink *>(link_.previous);
    else
      detail::native_api->misordered_pop(stack_, &link_, CALLSITE_NATIVE_CHECKS);
    stack_ = nullptr;
  }

 protected:
  NativeLink link_;     ///< this activation's link on the thread's native stack
  ThreadStack *stack_;  ///< the stack it was pushed on; null once popped (or never pushed)
  VisibleSlot slot_;  ///< a visible frame's interpreter frame (the rest unset when frame is null)
  const VisibleCode *visible_;  ///< set when slot_.frame is
};

/// A NativeFrame whose variables live in the interpreter's own structures for this activation
/// (an environment object, a register file): `fn(executable, state, context)` gives them, for
/// this frame only, before any locals reifier of its executable (`api::set_locals`). Called
/// only when something reads them (docs/native.md, "Variables"); `context` must stay valid
/// until the frame is popped. A plain NativeFrame pays nothing for this.
class NativeFrameWithLocals : public NativeFrame {
 public:
  /// Pushes a frame of `executable` at `state` (visible when `visible` is not null, as
  /// NativeFrame's) whose variables `fn(executable, state, context)` gives.
  NativeFrameWithLocals(const Executable &executable, std::uintptr_t state,
                        const VisibleCode *visible, LocalsReifier fn, void *context) noexcept
      : NativeFrame(executable, state, visible) {
    const NativeAPI *api = detail::native_api;
    if (api && stack_ && api->size >= offsetof(NativeAPI, set_frame_locals) + sizeof(void *)) {
      detail::ErrorSetAside pending;
      registered_ = api->set_frame_locals(&link_, slot_.frame ? &slot_ : nullptr, fn, context) == 0;
      PyErr_Clear();  // out of memory: the frame shows its executable's variables
    }
  }
  /// Pops the frame (see pop()).
  ~NativeFrameWithLocals() { pop(); }
  /// Pops now (idempotent): the frame's variables are read one last time if a frame object
  /// outlives it (a traceback), then its reifier is forgotten.
  void pop() noexcept {
    NativeFrame::pop();
    if (registered_) {
      registered_ = false;
      detail::native_api->set_frame_locals(&link_, nullptr, nullptr, nullptr);
    }
  }

 private:
  bool registered_ = false;  ///< set_frame_locals succeeded: pop() forgets the reifier
};

}  // namespace callsite
