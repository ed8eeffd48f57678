// native/visible_frames.cc — visible native frames: their memory (the thread's data stack,
// else a per-thread pool of heap blocks; never the C stack: see layouts/visible_frame.h),
// the registry of synthetic code objects per executable, and the checks around the
// per-version push/pop.
#include "native/visible_frames.h"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <unordered_map>

#include "core/compat.h"
#include "layouts/active.h"
#include "layouts/layout.h"
#include "layouts/visible_frame.h"
#include "native/frame_locals.h"
#include "native/shadow_stack.h"
#include "native/visible_code.h"

namespace callsite::native {
namespace {

// A frame's memory: a header, then the _PyInterpreterFrame. The header says where the
// block lives: on the data stack (kOnDataStack), or in the heap, where it links the block
// while it is free. The pusher's thread state is in the frame's VisibleSlot.
struct BlockHeader {
  BlockHeader *next_free;
};
inline BlockHeader *header_of(void *frame) { return static_cast<BlockHeader *>(frame) - 1; }
inline void *frame_of(BlockHeader *b) { return b + 1; }

BlockHeader on_data_stack_tag;
BlockHeader *const kOnDataStack = &on_data_stack_tag;

// Freed heap blocks of this thread, for when the data stack's chunk is full. Trivially
// destructible (initial-exec TLS, as the shadow stack): a thread that exits leaves at most
// kPoolKeep blocks behind.
struct Pool {
  BlockHeader *head;
  unsigned count;
};
constexpr unsigned kPoolKeep = 32;
constinit thread_local Pool t_pool [[gnu::tls_model("initial-exec")]] = {nullptr, 0};

const callsite_visible_ops *ops() {
  static const callsite_visible_ops *const chosen = callsite_visible_frames();
  return chosen;
}

std::size_t heap_frames = 0;  // GIL held: visible frames push only from attached threads

[[gnu::noinline]] BlockHeader *take_heap_block() {
  ++heap_frames;
  if (BlockHeader *b = t_pool.head) {
    t_pool.head = b->next_free;
    --t_pool.count;
    return b;
  }
  const callsite_visible_ops *o = ops();
  return o ? static_cast<BlockHeader *>(std::malloc(sizeof(BlockHeader) + o->frame_size))
           : nullptr;
}

// A block for a frame pushed by `ts`, the calling thread's state; nullptr: no memory.
inline BlockHeader *take_block(PyThreadState *ts) {
  if (void *top = callsite_visible_stack_take(ts, sizeof(BlockHeader))) [[likely]] {
    BlockHeader *b = static_cast<BlockHeader *>(top);
    b->next_free = kOnDataStack;
    return b;
  }
  return take_heap_block();
}

// Releases a heap block to the pool. A data-stack block that is not the stack's top (frames
// pushed after it not popped: a misordered pop) stays: the stack's owner releases it with
// the frames below.
[[gnu::noinline]] void give_heap_block(BlockHeader *b) {
  if (b->next_free == kOnDataStack) return;
  if (t_pool.count < kPoolKeep) {
    b->next_free = t_pool.head;
    t_pool.head = b;
    ++t_pool.count;
  } else {
    std::free(b);
  }
}

// Releases the block of a frame that `ts` popped.
inline void give_block(PyThreadState *ts, BlockHeader *b) {
  if (!callsite_visible_stack_give(ts, b, sizeof(BlockHeader))) [[unlikely]]
    give_heap_block(b);
}

#if CALLSITE_HAVE_VISIBLE
// The internal layout, whose marker of the running Python frame is the thread's current
// interpreter frame: a visible push reads it once for both stacks.
const callsite_layout *const internal_layout = callsite_layout_internal();

// The shard of `state` and its instruction: past the mapped states, the last shard's "no
// location" slot.
inline const std::uint16_t *locate(const VisibleCode *code, std::uintptr_t state,
                                   const VisibleShard **shard) {
  if (state < code->states) [[likely]] {  // shards of kStatesPerShard (what built it): shifts
    const VisibleShard *s = code->shards + state / kStatesPerShard;
    *shard = s;
    return s->first_state + state % kStatesPerShard;
  }
  const VisibleShard *s = code->shards + (code->shard_count - 1);
  *shard = s;
  return s->first_state + s->states;
}

// Records in `out` the frame that `ts` pushed in block `b`, running `shard` with its
// instruction pointer at `ip`.
inline void fill_slot(VisibleSlot *out, PyThreadState *ts, BlockHeader *b,
                      const VisibleShard *shard, const void **ip) {
  out->ip = reinterpret_cast<const std::uint16_t **>(ip);
  out->shard = shard;
  out->thread = ts;
  out->frame = frame_of(b);
}

// Links the interpreter frame on `ts` (attached: its tstate is the calling thread's) into
// `out`; the frame that was current goes to *previous. False when no memory is left.
inline bool link_frame(PyThreadState *ts, const VisibleCode *code, std::uintptr_t state,
                       VisibleSlot *out, const void **previous) {
  BlockHeader *b = take_block(ts);
  if (!b) [[unlikely]]
    return false;  // out of memory: shadow-only is still correct
  const VisibleShard *shard;
  const std::uint16_t *at = locate(code, state, &shard);
  fill_slot(out, ts, b, shard,
            callsite_visible_push(ts, frame_of(b), shard->code, guest_function_of_code(code), at,
                                 previous));
  return true;
}

// Whether frames running `shard`'s code get a FrameLocals at their push (see visible_code.cc).
inline bool code_has_locals(const VisibleShard *shard) {
  return reinterpret_cast<const PyCodeObject *>(shard->code)->co_flags & CALLSITE_CO_NATIVE_LOCALS;
}

// A frame whose executable (or itself) has a locals reifier holds a FrameLocals in f_locals
// from its push, which frame.f_locals returns: the reifier runs when it is read.
[[gnu::noinline]] void attach_locals(VisibleSlot *out, const Executable *executable,
                                                const NativeLink *link) {
  if (!out->frame || callsite_visible_locals_of(out->frame) ||
      !has_locals(executable, link))
    return;
  if (PyObject *mapping = new_frame_locals(link))
    callsite_visible_set_locals(out->frame, mapping);
}

// The popped frame's FrameLocals keeps the variables as of now when something outlives the
// pop (the frame object a traceback holds, or the mapping itself); else it forgets the frame.
[[gnu::noinline]] void detach_locals(void *frame, PyObject *mapping, bool live) {
  const bool keep = live && (callsite_visible_kept(frame) || Py_REFCNT(mapping) > 1);
  if (!keep && live && spare_frame_locals(mapping)) {
    callsite_visible_set_locals(frame, nullptr);  // kept for the thread's next push
    return;
  }
  freeze_frame_locals(mapping, keep);
}
#endif

// Code per executable; never destroyed (entries of static executables live for the process).
auto &codes = *new std::unordered_map<const Executable *, VisibleCode *>();

#if CALLSITE_HAVE_VISIBLE
// Only an interpreter frame can be misordered: a build without visible frames has none.
[[noreturn]] void misordered(const char *why) {
  std::fprintf(stderr,
               "callsite: visible native frame popped %s (visible frames must be popped in "
               "reverse order of pushing, on the pushing thread, with the GIL held)\n",
               why);
  std::fflush(stderr);
  std::abort();
}
#endif

}  // namespace

std::size_t visible_heap_frames() noexcept { return heap_frames; }

const char *visible_refusal() noexcept {
  if (ops()) return nullptr;
  if (const char *why = callsite_layout_internal_refusal()) return why;
  if (const char *why = callsite_visible_frames_backend_refusal()) return why;
  return "this build has no visible-frame implementation for this CPython version";
}

const VisibleCode *visible_code(const Executable *exe, std::size_t states) {
  if (const char *why = visible_refusal()) {
    PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                     "callsite: visible native frames are not available (%s); frames of %s "
                     "stay on callsite's shadow stack only",
                     why, exe->name ? exe->name : "?");
    return nullptr;  // with the warning's error if it was turned into one
  }
  if (auto it = codes.find(exe); it != codes.end()) return it->second;
  // The build runs reifiers, which may drop the last other reference to the executable.
  // Callers hold one (the code returned lives as long as the executable); one that does
  // not gets an error instead of code registered for a destroyed executable.
  PyObject *owner = Py_XNewRef(exe->owner);
  VisibleCode *code = build_visible_code(exe, states);
  if (owner && Py_REFCNT(owner) == 1) {
    free_visible_code(code);
    Py_DECREF(owner);  // destroys the executable
    if (!PyErr_Occurred())
      PyErr_SetString(PyExc_RuntimeError,
                      "callsite: the executable was destroyed while its visible code was "
                      "built (hold a reference to it)");
    return nullptr;
  }
  Py_XDECREF(owner);
  if (!code) return nullptr;
  // A reifier that pushed a visible frame of the same executable built it meanwhile: one
  // code per executable, the first.
  if (auto it = codes.find(exe); it != codes.end()) {
    const VisibleCode *first = it->second;
    free_visible_code(code);  // no Python: nothing else references this code yet
    return first;
  }
  try {
    codes.emplace(exe, code);
  } catch (const std::exception &) {  // out of memory; never the forced unwind
    free_visible_code(code);
    PyErr_NoMemory();
    return nullptr;
  }
  return code;
}

const VisibleCode *visible_code_of(ExecutableObject *exe) {
  if (exe->visible || exe->visible_states < 0) return exe->visible;
  exe->visible = visible_code(&exe->exe, std::size_t(exe->visible_states));
  if (!exe->visible && !PyErr_Occurred()) exe->visible_states = -1;  // unavailable: shadow
  return exe->visible;
}

void forget_visible(const Executable *exe) noexcept {
  auto it = codes.find(exe);
  if (it == codes.end()) return;
  // Erased first: releasing a code object may run Python (a weakref callback), which may
  // build or forget other executables' code.
  VisibleCode *code = it->second;
  codes.erase(it);
  free_visible_code(code);
}

#if CALLSITE_HAVE_VISIBLE

namespace {
// Everything but the common case: the internal layout's marker is the frame below ours;
// another backend's is taken before the frame is linked.
[[gnu::noinline]] ThreadStack *push_visible_slow(PyThreadState *ts, NativeLink *link,
                                                 const Executable *executable,
                                                 std::uintptr_t state, const VisibleCode *code,
                                                 VisibleSlot *out) noexcept {
  if (ts && code && callsite_active_layout == internal_layout) {
    const void *previous;
    if (link_frame(ts, code, state, out, &previous)) {
      ThreadStack *stack = push_marked(link, executable, state, previous);
      if (code_has_locals(out->shard)) attach_locals(out, executable, link);
      return stack;
    }
  }
  ThreadStack *stack = push_on(ts, link, executable, state);
  const void *previous;
  if (!ts || !code || !link_frame(ts, code, state, out, &previous)) out->frame = nullptr;
  else if (code_has_locals(out->shard)) attach_locals(out, executable, link);
  return stack;
}
}  // namespace

// The common case calls nothing, so that it saves no register: room on the data stack, the
// internal layout. Anything else goes to push_visible_slow.
ThreadStack *push_visible(PyThreadState *ts, NativeLink *link, const Executable *executable,
                          std::uintptr_t state, const VisibleCode *code,
                          VisibleSlot *out) noexcept {
  // An executable with a locals reifier pushes through the slow path, which gives the frame
  // its FrameLocals: the test of that (the code's bit) is only made once any reifier exists.
  if (ts && code && callsite_active_layout == internal_layout &&
      !(any_locals && code_has_locals(code->shards))) [[likely]] {
    const VisibleShard *shard;
    const std::uint16_t *at = locate(code, state, &shard);
    if (void *top = callsite_visible_stack_take(ts, sizeof(BlockHeader))) [[likely]] {
      BlockHeader *b = static_cast<BlockHeader *>(top);
      b->next_free = kOnDataStack;
      const void *previous;
      fill_slot(out, ts, b, shard,
                callsite_visible_push(ts, frame_of(b), shard->code, guest_function_of_code(code),
                                      at, &previous));
      return push_marked(link, executable, state, previous);
    }
  }
  return push_visible_slow(ts, link, executable, state, code, out);
}

bool push_interpreter_frame(const VisibleCode *code, std::uintptr_t state, VisibleSlot *out,
                            const NativeLink *link) noexcept {
  PyThreadState *ts = compat::current_tstate();
  const void *previous;
  if (ts && code && link_frame(ts, code, state, out, &previous)) {
    if (link && code_has_locals(out->shard)) attach_locals(out, link->executable, link);
    return true;
  }
  out->frame = nullptr;
  return false;
}

void visible_set_state(VisibleSlot *slot, const VisibleCode *code,
                       std::uintptr_t state) noexcept {
  if (!slot->frame) return;
  const VisibleShard *shard = slot->shard;
  const std::uint16_t *at;
  if (state < code->states) [[likely]]
    at = locate(code, state, &shard);
  else  // no location: stay in the shard the frame runs
    at = shard->first_state + shard->states;
  if (shard == slot->shard) {
    *slot->ip = at;
  } else {
    callsite_visible_set_code(slot->frame, shard->code, at);
    slot->shard = shard;
  }
  callsite_visible_moved(slot->thread, slot->frame);
}

void pop_interpreter_frame(VisibleSlot *slot, int checked) noexcept {
  void *frame = slot->frame;
  if (!frame) return;
  if (!callsite_visible_is_current(slot->thread, frame)) [[unlikely]] {
    if (checked) misordered("while it is not its thread's current frame");
    // Still reachable from the chain (the block is kept), but its link is going away.
    if (PyObject *mapping = callsite_visible_locals_of(frame)) detach_locals(frame, mapping, false);
    slot->frame = nullptr;
    return;
  }
  // Read while the frame is still the current one: the reifier may run any code.
  if (PyObject *mapping = callsite_visible_locals_of(frame)) [[unlikely]] {
    detach_locals(frame, mapping, true);
    if (!callsite_visible_is_current(slot->thread, frame)) [[unlikely]] {
      if (checked) misordered("by its locals reifier (it is no longer the current frame)");
      slot->frame = nullptr;
      return;
    }
  }
  // A frame object that outlives the pop (a traceback's) keeps the frame with the post-mortem
  // copy of its code (visible_code.h): made before the pop, while the frame is current.
  PyFrameObject *kept = nullptr;
  PyObject *post_mortem = nullptr;
  if (callsite_visible_kept(frame)) [[unlikely]] {
    kept = reinterpret_cast<PyFrameObject *>(
        Py_NewRef(reinterpret_cast<PyObject *>(callsite_visible_frame_object(frame))));
    PyObject *exc = compat::take_raised_exception();
    post_mortem = post_mortem_code(slot->shard->code, kept);
    if (!post_mortem) PyErr_Clear();  // the frame keeps its live code
    if (exc) compat::restore_raised_exception(exc);
    if (!callsite_visible_is_current(slot->thread, frame)) [[unlikely]] {
      Py_XDECREF(post_mortem);
      Py_DECREF(kept);
      if (checked) misordered("while its code was copied (it is no longer the current frame)");
      slot->frame = nullptr;
      return;
    }
  }
  callsite_visible_pop(slot->thread, frame);
  give_block(slot->thread, header_of(frame));
  slot->frame = nullptr;
  if (kept) {
    if (post_mortem) callsite_visible_give_code(kept, post_mortem);
    Py_XDECREF(post_mortem);
    Py_DECREF(kept);
  }
}

#else  // no visible-frame implementation in this build: no VisibleCode is ever made

ThreadStack *push_visible(PyThreadState *ts, NativeLink *link, const Executable *executable,
                          std::uintptr_t state, const VisibleCode *, VisibleSlot *out) noexcept {
  out->frame = nullptr;
  return push_on(ts, link, executable, state);
}

bool push_interpreter_frame(const VisibleCode *, std::uintptr_t, VisibleSlot *out,
                            const NativeLink *) noexcept {
  out->frame = nullptr;
  return false;
}

void visible_set_state(VisibleSlot *, const VisibleCode *, std::uintptr_t) noexcept {}

void pop_interpreter_frame(VisibleSlot *slot, int) noexcept { slot->frame = nullptr; }

#endif

namespace {
[[gnu::noinline]] void pop_visible_slow(ThreadStack *stack, NativeLink *link, VisibleSlot *slot,
                                        int checked) noexcept {
  pop_interpreter_frame(slot, checked);
  if (!stack) return;
  if (stack->head == link)
    stack->head = const_cast<NativeLink *>(link->previous);
  else
    misordered_pop(stack, link, checked);
}
}  // namespace

void pop_visible(ThreadStack *stack, NativeLink *link, VisibleSlot *slot, int checked) noexcept {
#if CALLSITE_HAVE_VISIBLE
  // The common case without a call or a saved register: in order, nothing to release, on
  // the top of the data stack. It reads the frame and its thread from the slot, not from
  // the block's header: one load less on the path from push to pop. Anything else takes
  // the checked path.
  void *frame = slot->frame;
  PyThreadState *ts = slot->thread;
  if (frame && stack && stack->head == link) [[likely]] {
    if (callsite_visible_pop_quick(ts, frame)) [[likely]] {
      slot->frame = nullptr;
      stack->head = const_cast<NativeLink *>(link->previous);
      give_block(ts, header_of(frame));
      return;
    }
  }
#endif
  pop_visible_slow(stack, link, slot, checked);
}

int api_set_frame_locals(NativeLink *link, VisibleSlot *slot, LocalsReifier fn,
                         void *context) noexcept {
  return register_frame_locals(link, slot, fn, context, false);
}

int register_frame_locals(NativeLink *link, VisibleSlot *slot, LocalsReifier fn, void *context,
                          bool fresh) noexcept {
  const int rc = fresh ? add_frame_locals(link, fn, context)
                       : set_frame_locals(link, slot, fn, context);
  if (rc < 0) return -1;
#if CALLSITE_HAVE_VISIBLE
  if (fn && slot && slot->frame) attach_locals(slot, link->executable, link);
#endif
  return 0;
}

void visible_traceback_here() noexcept {
  PyObject *exc = compat::take_raised_exception();
  if (!exc) return;
  PyFrameObject *frame = PyEval_GetFrame();  // borrowed; may create the frame object
  PyErr_Clear();
  compat::restore_raised_exception(exc);
  if (frame) PyTraceBack_Here(frame);
}

}  // namespace callsite::native
