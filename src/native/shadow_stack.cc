// native/shadow_stack.cc — the per-thread shadow stack: push/pop touch only thread-local
// memory; the rare stacks with frames pushed from generators are spliced at capture time.
#include "native/shadow_stack.h"

#include <frameobject.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <unordered_map>
#include <vector>

#include "core/compat.h"
#include "layouts/active.h"

namespace callsite::native {
namespace {

// Trivially constructible and destructible, so access needs no TLS guard or destructor
// registration. initial-exec: a fixed offset from the thread pointer instead of a
// __tls_get_addr call per access (16 bytes of glibc's static TLS reserve for dlopen'ed
// modules, which exists for exactly this).
struct ThreadState {
  ThreadStack stack;
  unsigned long thread_id;  // PyThread_get_thread_ident() of this thread, 0 until needed
};
constinit thread_local ThreadState t_state [[gnu::tls_model("initial-exec")]] = {{nullptr}, 0};
#define t_stack (t_state.stack)

// Frames pushed from generator/coroutine frames, by the marker of that frame (its
// _PyInterpreterFrame lives inside the generator object on 3.11+, its frame object on 3.10:
// either way stable across suspensions and threads). Push order per marker. GIL-protected;
// never destroyed (entries may outlive interpreter finalization).
auto &parked = *new std::unordered_map<const void *, std::vector<NativeLink *>>();
std::size_t parked_count = 0;

// The spliced copy a capture walks when frames are parked; rebuilt on every capture. A
// capture may allocate after taking it (a collection then runs finalizers, which may capture
// and splice again on this thread), so a rebuild goes into other storage and the list it
// replaces stays valid until the rebuild after it.
struct Spliced {
  std::vector<NativeLink> links;
  std::vector<const NativeLink *> origin;
};
thread_local Spliced t_spliced, t_retired;

const char *name_of(const NativeLink *link) {
  return link && link->executable && link->executable->name ? link->executable->name
                                                            : "(none)";
}

bool on_stack(const ThreadStack *stack, const NativeLink *link) {
  for (const NativeLink *p = stack->head; p; p = p->previous)
    if (p == link) return true;
  return false;
}

// The walker emits a native frame just before the Python frame whose marker it holds, in
// one pass over both chains, so the native list must follow the Python chain's order. Parked
// frames break that (a suspended generator's frames must vanish, a resumed one's reappear in
// its place), so rebuild a consistent list: for each running Python frame, innermost first,
// the thread's own frames with its marker, then the frames parked under it (innermost first).
const NativeLink *splice() noexcept {
  Spliced fresh = std::move(t_retired);  // its storage, if any: no walk uses it any more
  t_retired = Spliced();
  std::vector<NativeLink> &out = fresh.links;
  std::vector<const NativeLink *> &origin = fresh.origin;
  out.clear();
  origin.clear();
  const NativeLink *own = t_stack.head;
  PyThreadState *ts = compat::current_tstate();
  PyFrameObject *f = ts ? PyThreadState_GetFrame(ts) : nullptr;  // new reference
  if (!f) PyErr_Clear();
  try {
    while (f) {
      const void *marker = callsite_marker_of_frame_object(f);
      while (own && own->marker == marker) {
        out.push_back(*own);
        origin.push_back(own);
        own = own->previous;
      }
      if (auto it = parked.find(marker); it != parked.end())
        for (auto link = it->second.rbegin(); link != it->second.rend(); ++link) {
          out.push_back(**link);
          origin.push_back(*link);
        }
      PyFrameObject *back = PyFrame_GetBack(f);  // may allocate: no iterator held across it
      Py_DECREF(f);
      f = back;
    }
    for (; own; own = own->previous) {
      out.push_back(*own);
      origin.push_back(own);
    }
  } catch (const std::exception &) {  // out of memory: show the thread's own frames as they are
    // (not `...`: a daemon thread's forced unwind at finalization must pass through)
    Py_XDECREF(f);
    return t_stack.head;
  }
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i].previous = i + 1 < out.size() ? &out[i + 1] : nullptr;
  t_retired = std::move(t_spliced);
  t_spliced = std::move(fresh);
  const std::vector<NativeLink> &links = t_spliced.links;
  return links.empty() ? nullptr : &links[0];
}

}  // namespace

ThreadStack *this_thread() noexcept { return &t_stack; }

namespace {

// Everything but the common case, kept out of push's fast path.
[[gnu::noinline]] const void *marker_slow(PyThreadState *ts) {
  if (!compat::kThreadLocalTstate && ts) {
    if (!t_state.thread_id) t_state.thread_id = PyThread_get_thread_ident();
    if (ts->thread_id == t_state.thread_id) return callsite_active_layout->current_marker(ts);
  }
  // No GIL: this thread's own (detached) state, whose frames cannot change meanwhile. The
  // public walk materialises frame objects, which needs the GIL: no marker then.
  if (callsite_active_layout == &callsite_layout_public) return nullptr;
  ts = PyGILState_GetThisThreadState();
  return ts ? callsite_active_layout->current_marker(ts) : nullptr;
}

inline const void *marker_of(PyThreadState *ts) {
  // Before 3.12 the "current" thread state is the GIL holder's, maybe another thread's:
  // compare its creator thread with ours (cached: a thread's id never changes). 3.12+: a
  // thread-local, NULL while this thread is detached.
  if (ts && (compat::kThreadLocalTstate || ts->thread_id == t_state.thread_id)) [[likely]]
    return callsite_active_layout->current_marker(ts);
  return marker_slow(ts);
}

inline const void *marker_fast() { return marker_of(compat::current_tstate()); }

// Links `link`, its fields filled, as the calling thread's innermost frame.
inline ThreadStack *link_innermost(NativeLink *link) {
  ThreadStack *stack = &t_stack;
  link->previous = stack->head;
  stack->head = link;
  return stack;
}

}  // namespace

const void *current_marker() noexcept { return marker_fast(); }

// The link's fields are stored before the thread-state call, so that only `link` lives
// across it (one saved register instead of three).
ThreadStack *push(NativeLink *link, const Executable *executable, std::uintptr_t state) noexcept {
  link->executable = executable;
  link->state = state;
  link->marker = marker_fast();
  return link_innermost(link);
}

ThreadStack *push_marked(NativeLink *link, const Executable *executable, std::uintptr_t state,
                         const void *marker) noexcept {
  link->executable = executable;
  link->state = state;
  link->marker = marker;
  return link_innermost(link);
}

ThreadStack *push_on(PyThreadState *ts, NativeLink *link, const Executable *executable,
                     std::uintptr_t state) noexcept {
  link->executable = executable;
  link->state = state;
  link->marker = marker_of(ts);
  return link_innermost(link);
}

bool unlink(ThreadStack *stack, NativeLink *link) noexcept {
  for (NativeLink **slot = &stack->head; *slot;
       slot = const_cast<NativeLink **>(&(*slot)->previous)) {
    if (*slot == link) {
      *slot = const_cast<NativeLink *>(link->previous);
      return true;
    }
  }
  return false;
}

void misordered_pop(ThreadStack *stack, NativeLink *link, int checked) noexcept {
  if (checked) {
    if (on_stack(stack, link))
      std::fprintf(stderr,
                   "callsite: native frame '%s' popped out of order: '%s' was pushed after it and "
                   "is still active (NativeFrames must be destroyed in reverse order of "
                   "construction)\n",
                   name_of(link), name_of(stack->head));
    else
      std::fprintf(stderr,
                   "callsite: native frame '%s' popped but it is not on this thread's stack "
                   "(popped twice, or on another thread than the one that pushed it)\n",
                   name_of(link));
    std::fflush(stderr);
    std::abort();
  }
  unlink(stack, link);
}

bool in_suspendable_frame() noexcept {
  callsite_raw_frame top;
  int complete = 0;
  const callsite_walk_request req{&top, 1, 0, 1, nullptr};
  if (callsite_active_layout->walk(compat::current_tstate(), &req, &complete) != 1) return false;
  const int flags = reinterpret_cast<PyCodeObject *>(top.tagged)->co_flags;
  return flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE);
}

bool park(NativeLink *link) noexcept {
  try {
    parked[link->marker].push_back(link);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    PyErr_NoMemory();
    return false;
  }
  ++parked_count;
  return true;
}

void unpark(NativeLink *link) noexcept {
  auto it = parked.find(link->marker);
  if (it == parked.end()) return;
  std::vector<NativeLink *> &links = it->second;
  for (auto p = links.begin(); p != links.end(); ++p) {
    if (*p == link) {
      links.erase(p);
      --parked_count;
      break;
    }
  }
  if (links.empty()) parked.erase(it);
}

const NativeLink *innermost() noexcept {
  return parked_count == 0 ? t_stack.head : splice();
}

bool any_parked() noexcept { return parked_count != 0; }

const std::vector<NativeLink *> *parked_under(const void *marker) noexcept {
  auto it = parked.find(marker);
  return it == parked.end() ? nullptr : &it->second;
}

const NativeLink *origin_of(const NativeLink *seen) noexcept {
  const std::vector<NativeLink> &out = t_spliced.links;
  if (!out.empty() && seen >= &out.front() && seen <= &out.back())
    return t_spliced.origin[std::size_t(seen - &out.front())];
  return seen;
}

}  // namespace callsite::native
