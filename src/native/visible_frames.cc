// native/visible_frames.cc — visible native frames: a per-thread pool of heap blocks for the
// frames (never the C stack: see layouts/visible_frame.h), the registry of synthetic code
// objects per executable, and the checks around the per-version push/pop.
#include "native/visible_frames.h"

#include <cstdio>
#include <cstdlib>
#include <unordered_map>

#include "core/compat.h"
#include "layouts/layout.h"
#include "layouts/visible_frame.h"
#include "native/visible_code.h"

namespace callsite::native {
namespace {

// Freed blocks, linked through their first word. Trivially destructible (initial-exec TLS,
// as the shadow stack): a thread that exits leaves at most kPoolKeep blocks behind.
struct FreeBlock {
  FreeBlock *next;
};
struct Pool {
  FreeBlock *head;
  unsigned count;
};
constexpr unsigned kPoolKeep = 32;
constinit thread_local Pool t_pool [[gnu::tls_model("initial-exec")]] = {nullptr, 0};

const callsite_visible_ops *ops() {
  static const callsite_visible_ops *const chosen = callsite_visible_frames();
  return chosen;
}

// Each block holds the frame, then the thread state that pushed it: pop then needs no
// thread-state lookup (on 3.12 a call into libpython and a __tls_get_addr).
inline PyThreadState *&pusher_of(void *block, const callsite_visible_ops *o) {
  return *reinterpret_cast<PyThreadState **>(static_cast<char *>(block) + o->frame_size);
}

// Code per executable; never destroyed (entries of static executables live for the process).
auto &codes = *new std::unordered_map<const Executable *, VisibleCode *>();

[[noreturn]] void misordered(const char *why) {
  std::fprintf(stderr,
               "callsite: visible native frame popped %s (visible frames must be popped in "
               "reverse order of pushing, on the pushing thread, with the GIL held)\n",
               why);
  std::fflush(stderr);
  std::abort();
}

}  // namespace

const char *visible_refusal() noexcept {
  if (ops()) return nullptr;
  if (const char *why = callsite_layout_internal_refusal()) return why;
  return "this build has no visible-frame implementation for this CPython version";
}

const VisibleCode *visible_code(const Executable *exe, std::size_t states) noexcept {
  if (const char *why = visible_refusal()) {
    PyErr_WarnFormat(PyExc_RuntimeWarning, 1,
                     "callsite: visible native frames are not available (%s); frames of %s "
                     "stay on callsite's shadow stack only",
                     why, exe->name ? exe->name : "?");
    return nullptr;  // with the warning's error if it was turned into one
  }
  if (auto it = codes.find(exe); it != codes.end()) return it->second;
  VisibleCode *code = build_visible_code(exe, states);
  if (!code) return nullptr;
  try {
    codes.emplace(exe, code);
  } catch (...) {
    free_visible_code(code);
    PyErr_NoMemory();
    return nullptr;
  }
  return code;
}

void forget_visible(const Executable *exe) noexcept {
  auto it = codes.find(exe);
  if (it == codes.end()) return;
  free_visible_code(it->second);
  codes.erase(it);
}

void *push_visible(const VisibleCode *code, std::uintptr_t state,
                   const std::uint16_t ***ip) noexcept {
  const callsite_visible_ops *o = ops();
  PyThreadState *ts = compat::current_tstate();
  if (!o || !ts || !code) return nullptr;
  void *block;
  if (FreeBlock *b = t_pool.head) {
    t_pool.head = b->next;
    --t_pool.count;
    block = b;
  } else if (!(block = std::malloc(o->frame_size + sizeof(PyThreadState *)))) {
    return nullptr;  // out of memory: shadow-only is still correct
  }
  const std::uint16_t *at = code->first_state + (state < code->states ? state : code->states);
  o->push(ts, block, code->code, at);
  pusher_of(block, o) = ts;
  *ip = reinterpret_cast<const std::uint16_t **>(static_cast<char *>(block) + o->ip_offset);
  return block;
}

void pop_visible(void *frame, int checked) noexcept {
  const callsite_visible_ops *o = ops();
  PyThreadState *ts = pusher_of(frame, o);
  if (!o->is_current(ts, frame)) {
    if (checked) misordered("while it is not its thread's current frame");
    return;  // still reachable from the chain: keep the block
  }
  o->pop(ts, frame);
  if (t_pool.count < kPoolKeep) {
    auto *b = static_cast<FreeBlock *>(frame);
    b->next = t_pool.head;
    t_pool.head = b;
    ++t_pool.count;
  } else {
    std::free(frame);
  }
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
