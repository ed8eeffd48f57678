// mlir/locate.cc — stack → location: raw walk, whole-stack cache, filter, chain cache, build.
#include "mlir/locate.h"

#include <exception>
#include <vector>

#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "core/args.h"
#include "filter/filter.h"
#include "mlir/bindings.h"
#include "mlir/build.h"
#include "mlir/build_capi.h"
#include "mlir/settings.h"
#include "native/shadow_stack.h"
#include "tracking/tracking.h"

namespace callsite::mlir {
namespace {

// Whole-stack entries per context before the sequence caches start over (a bound on memory
// for programs whose stacks never repeat; per-frame locations are kept).
constexpr std::size_t kMaxStacks = std::size_t(1) << 16;
// Per-frame locations per context before every table starts over: Python frames are bounded
// by the program, native ones are not (a JIT's states may never repeat).
constexpr std::size_t kMaxFrames = std::size_t(1) << 16;
// Set in the generation half of a whole-stack key when the stack ends at a kernel boundary:
// the same raw frames filter differently then (the boundary frame is kept). Generations are a
// counter that never reaches it.
constexpr std::uint64_t kAtBoundaryKey = std::uint64_t(1) << 63;
// Kept frames held on the C stack while one location is built (more go to the heap).
constexpr std::size_t kInlineKept = 32;
// Frames a prefix walk reads beyond the limit (the dropped ones among the innermost: the
// bindings' own, a DSL's helpers).
constexpr std::size_t kPrefixSlack = 8;

inline std::uint64_t stack_seed(std::uint64_t stamp, std::size_t limit) {
  return stamp * 0x9E3779B97F4A7C15ull ^ std::uint64_t(limit);
}

}  // namespace

PyObject *kept_location(ContextCache &cc, const RawFrame *kept, std::size_t m) {
  // New references throughout: building calls into the bindings, which may run a collection
  // or even re-enter here; nothing borrowed from the tables is held across such a call.
  if (cc.frame_count() + m > kMaxFrames) cc.clear_frames();  // before anything is borrowed
  if (cc.mlir_context) return Py_XNewRef(kept_location_capi(cc, kept, m));
  if (m == 0) return Py_XNewRef(unknown_location(cc));
  if (m == 1) return Py_XNewRef(frame_location(cc, kept[0]));
  // The longest cached suffix S_i = callsite(f_i at S_{i+1}) (S_{m-1} = f_{m-1}), then the
  // missing links: in a long straight-line kernel only the innermost link is new per op.
  std::vector<std::uint64_t> hashes(m);
  for (std::size_t i = 0; i + 1 < m; ++i) hashes[i] = hash_frames(kept + i, m - i, 0);
  std::size_t i = 0;
  PyObject *tail = nullptr;
  for (; i + 1 < m; ++i)
    if ((tail = cc.find_chain(hashes[i], kept + i, m - i))) break;
  if (!tail) {
    i = m - 1;
    tail = frame_location(cc, kept[m - 1]);
  }
  Py_XINCREF(tail);
  while (tail && i-- > 0) {
    PyObject *callee = Py_XNewRef(frame_location(cc, kept[i]));
    PyObject *link = callee ? callsite_location(cc, callee, tail) : nullptr;
    Py_XDECREF(callee);
    Py_DECREF(tail);
    tail = link;
    if (!link) break;
    if (!cc.store_chain(hashes[i], kept + i, m - i, link)) {
      Py_CLEAR(tail);
      PyErr_NoMemory();
      break;
    }
  }
  return tail;
}

namespace {

// The C API path's whole-stack level. Its misses cost a copy of the stack, a reference per
// frame and a hash; they are all a new Context sees (each op's stack is new there), and the
// trie of links reaches the final location with one probe per kept frame anyway. So a stack
// is stored only once its final location is one this context has made before (a stack that
// repeats, or another stack with the same location): a kernel built again in the same Context
// then hits as before, and an empty table is not even hashed.
__attribute__((always_inline)) inline PyObject *capi_frames_location(
    ContextCache &cc, PyObject *filter, std::size_t limit, const RawFrame *frames,
    std::size_t n, WalkEnd end, StackWalk *walk, std::uint64_t generation) {
  std::uint64_t hash = 0;
  const bool hashed = cc.stack_count() != 0;
  if (hashed) {
    hash = hash_frames(frames, n, stack_seed(generation, limit));
    if (PyObject *hit = cc.peek_stack(hash, frames, n, generation, limit)) {
      cc.note_lookup(true);
      return Py_NewRef(hit);
    }
    if (cc.stack_count() >= kMaxStacks) cc.clear_sequences();
  }
  // From here on Python code runs (reifiers, the filter's rules, the bindings) and may pop the
  // native frames of a walk, freeing their executables: the walk's are retained (a Traceback's
  // are its own; Python frames' code objects belong to frames still running). A walk has
  // native entries only when this thread has native frames (no Python code ran since it).
  if (walk && native::innermost()) walk->hold_native_entries();
  // A walk not yet complete (stack_location's prefix: limit <= kInlineKept) fits inline.
  const std::size_t room = n < limit ? n : limit;
  RawFrame inline_kept[kInlineKept];
  std::vector<RawFrame> heap_kept;
  try {
    if (room > kInlineKept) heap_kept.resize(room);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return PyErr_NoMemory();
  }
  RawFrame *kept = room > kInlineKept ? heap_kept.data() : inline_kept;
  std::size_t k = detail::keep_frames(filter, frames, n, kept, limit, end);
  // A prefix that kept fewer than `limit` frames: walk further (the frames below this call are
  // the same after the Python code the decisions ran) and decide again.
  while (k != SIZE_MAX && k < limit && walk && !walk->complete() && walk->extend()) {
    frames = walk->data();
    n = walk->size();
    end = walk->end();
    k = detail::keep_frames(filter, frames, n, kept, limit, end);
  }
  if (k == SIZE_MAX) return nullptr;
  if (cc.frame_count() + k > kMaxFrames) cc.clear_frames();  // before anything is borrowed
  bool repeated = false;
  PyObject *loc = Py_XNewRef(kept_location_capi(cc, kept, k, &repeated));
  if (loc) cc.note_lookup(repeated);
  if (!loc || !repeated) return loc;
  // `loc` is owned by the final table; the whole-stack table only points at it. Its key is the
  // whole stack (a prefix walk has no boundary: the generation stays that of its end).
  if (walk && !walk->complete()) {
    walk->walk_all();
    frames = walk->data();
    n = walk->size();
  }
  if (!hashed) hash = hash_frames(frames, n, stack_seed(generation, limit));
  FrameSeq key;
  try {
    key = FrameSeq(frames, n);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(loc);
    return PyErr_NoMemory();
  }
  if (!cc.store_stack(hash, std::move(key), generation, limit, loc)) {
    Py_DECREF(loc);
    return PyErr_NoMemory();
  }
  return loc;
}

// The whole-stack cache's key is the raw frames, the filter's stamp and the limit: a hit is
// one hash and one comparison; a miss filters, builds through the chain and frame caches and
// stores the result (the Python API path; the C API path's level is capi_frames_location's).
__attribute__((always_inline)) inline PyObject *raw_frames_location(
    ContextCache &cc, PyObject *filter, std::size_t limit, const RawFrame *frames,
    std::size_t n, WalkEnd end, StackWalk *walk) {
  // MLIR's rule: an explicit limit replaces the filter's.
  if (limit == SIZE_MAX) limit = detail::limit_of(filter);
  const std::uint64_t generation =
      detail::generation_of(filter) | (end == WalkEnd::at_boundary ? kAtBoundaryKey : 0);
  if (cc.mlir_context)
    return capi_frames_location(cc, filter, limit, frames, n, end, walk, generation);
  const std::uint64_t hash = hash_frames(frames, n, stack_seed(generation, limit));
  if (PyObject *hit = cc.find_stack(hash, frames, n, generation, limit)) return Py_NewRef(hit);
  if (cc.stack_count() >= kMaxStacks) cc.clear_sequences();

  // From here on Python code runs (reifiers, the filter's rules, the bindings) and may pop the
  // native frames of a walk, freeing their executables: the frames are retained first (the
  // key the whole-stack table keeps).
  FrameSeq key;
  // The limit counts kept frames; the walk goes on past dropped ones (as MLIR's does). Kept
  // frames live on the stack up to MLIR's usual limits (no allocation per miss).
  const std::size_t room = n < limit ? n : limit;
  RawFrame inline_kept[kInlineKept];
  std::vector<RawFrame> heap_kept;
  try {
    key = FrameSeq(frames, n);
    if (room > kInlineKept) heap_kept.resize(room);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return PyErr_NoMemory();
  }
  RawFrame *kept = room > kInlineKept ? heap_kept.data() : inline_kept;
  const std::size_t k = detail::keep_frames(filter, key.frames.get(), n, kept, limit, end);
  if (k == SIZE_MAX) return nullptr;
  PyObject *loc = kept_location(cc, kept, k);
  if (!loc) return nullptr;
  // `loc` is owned by the frame or chain table; the whole-stack table only points at it.
  if (!cc.store_stack(hash, std::move(key), generation, limit, loc)) {
    Py_DECREF(loc);
    return PyErr_NoMemory();
  }
  return loc;
}

}  // namespace

PyObject *stack_location(ContextCache &cc, PyObject *filter, std::size_t limit,
                         std::size_t skip) {
  // Through the C API with no whole stack stored in this Context (every op of a new one), only
  // the frames up to the limit's last kept one are read: a prefix is walked first (not under a
  // kernel boundary, which a complete walk finds, and not past what fits kept inline).
  const std::size_t resolved = limit == SIZE_MAX ? detail::limit_of(filter) : limit;
  const bool prefix = cc.mlir_context && !cc.stack_count() && resolved <= kInlineKept;
  StackWalk stack(skip, prefix ? resolved + kPrefixSlack : kStackBuffer);
  if (!prefix || stack.bounded()) stack.walk_all();
  return raw_frames_location(cc, filter, limit, stack.data(), stack.size(), stack.end(),
                             &stack);
}

PyObject *traceback_location(ContextCache &cc, PyObject *filter, std::size_t limit,
                             PyObject *tb) {
  return raw_frames_location(cc, filter, limit, traceback_frames(tb), traceback_size(tb),
                             traceback_end(tb), nullptr);
}

PyObject *window_location(ContextCache &cc, PyObject *filter, std::size_t limit) {
  // MLIR's rule, as on the walk path: an explicit limit replaces the filter's (the window query
  // of callsite.capture() takes the smaller of the two instead, so it is not asked to filter).
  if (limit == SIZE_MAX) limit = detail::limit_of(filter);
  PyObject *window = tracking::window_traceback(0, SIZE_MAX, nullptr);  // owns its entries
  if (!window) return nullptr;
  const RawFrame *frames = traceback_frames(window);
  const std::size_t n = traceback_size(window);
  PyObject *loc = nullptr;
  std::vector<RawFrame> kept;
  try {
    kept.resize(n < limit ? n : limit);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(window);
    return PyErr_NoMemory();
  }
  const std::size_t k = detail::keep_frames(filter, frames, n, kept.data(), limit);
  // No whole-stack cache: a window is not a stack; the chain and frame caches still apply.
  if (k != SIZE_MAX) loc = kept_location(cc, kept.data(), k);
  Py_DECREF(window);
  return loc;
}

namespace {

constexpr const char *kNames[] = {"filter", "skip", "context", "limit"};
constexpr Py_ssize_t kAll = 4;

// What detects the bindings already imported (callsite.mlir.bindings()), registered by the
// Python layer at import: C++ does not import the Python package.
PyObject *detector = nullptr;

// Registers every set of bindings already imported, through the registered detector. False
// with its error when `report`, else false with no error (the caller reports in its own words).
bool detect_bindings(bool report = false) {
  PyObject *fn = Py_XNewRef(detector);  // held: the call may register another detector
  PyObject *r = fn ? PyObject_CallNoArgs(fn) : nullptr;
  if (!fn)
    PyErr_SetString(PyExc_RuntimeError, "callsite.mlir: no bindings detector is registered "
                                        "(the callsite package was not imported)");
  Py_XDECREF(fn);
  Py_XDECREF(r);
  if (!r && !report) PyErr_Clear();
  return r != nullptr;
}

// The bindings and current context to use: those of `context`, else the first bindings with
// a current context (importing callsite.mlir to detect bindings when none are registered yet).
__attribute__((always_inline)) inline BindingsObject *resolve(PyObject *context,
                                                            PyObject **ctx_out) {
  if (context && context != Py_None) {
    BindingsObject *b = bindings_of_context(context);
    if (!b && detect_bindings()) b = bindings_of_context(context);
    if (!b) {
      PyErr_Format(PyExc_TypeError,
                   "context must be an ir.Context of MLIR bindings known to callsite.mlir, not "
                   "%.200s (see callsite.mlir.use())",
                   Py_TYPE(context)->tp_name);
      return nullptr;
    }
    *ctx_out = Py_NewRef(context);
    return b;
  }
  if (all_bindings().empty() && !detect_bindings(true)) return nullptr;
  // A second round after detecting again: the current context may be of bindings imported
  // since the first were registered.
  for (int round = 0; round < 2; ++round) {
    if (round == 1 && !detect_bindings()) break;
    // By index: Context.current is Python code, which may register more bindings.
    for (std::size_t i = 0; i < all_bindings().size(); ++i) {
      BindingsObject *b = all_bindings()[i];
      PyObject *ctx = current_context(b);
      if (ctx) {
        *ctx_out = ctx;
        return b;
      }
      if (PyErr_Occurred()) return nullptr;
    }
  }
  PyErr_SetString(PyExc_ValueError,
                  "callsite.mlir.location(): no current MLIR context (enter `with ir.Context():` "
                  "or pass context=)");
  return nullptr;
}

}  // namespace

namespace {

// The part of location() shared by its two forms: `slots` (filter, skip, context, limit)
// checked and resolved, then `locate(cache, filter, limit)`. Inlined into each form, so the
// per-call stack form compiles as if it were alone.
template <class Locate>
__attribute__((always_inline)) inline PyObject *locate_with(PyObject *const *slots,
                                                            bool source_positional,
                                                            Locate &&locate) {
  std::size_t limit = SIZE_MAX;
  if (slots[3] && !detail::parse_count(slots[3], "limit", SIZE_MAX, &limit)) return nullptr;
  PyObject *filter = slots[0] && slots[0] != Py_None ? slots[0] : nullptr;
  if (filter && !is_filter(filter)) {
    PyErr_Format(PyExc_TypeError,
                 source_positional
                     ? "source must be a callsite.Filter, a callsite.Traceback or None, not %.200s"
                     : "filter must be a callsite.Filter or None, not %.200s",
                 Py_TYPE(filter)->tp_name);
    return nullptr;
  }
  SettingsObject *active = nullptr;
  if (current_settings(&active) < 0) return nullptr;
  if (!filter) filter = active ? active->filter : default_filter();
  if (!slots[3] && active) limit = active->limit;
  // Held to the end: a reifier or a finalizer may leave the scope whose settings own it.
  Py_XINCREF(filter);
  Py_XDECREF(active);
  if (!filter) return nullptr;

  PyObject *ctx = nullptr, *loc = nullptr;
  if (BindingsObject *b = resolve(slots[2], &ctx)) {
    ContextCache *cc = cache_for(b, ctx);
    CacheHold hold(cc);  // the lookup runs Python code, which may drop the cache
    loc = cc ? locate(*cc, filter, limit) : nullptr;
    // The C API path's locations are plain ir.Location objects: the caller gets the typed one,
    // as on the Python API path (the op builders take the plain one, see mlir/injector.cc).
    if (loc && cc->mlir_context) loc = typed_location_capi(*cc, loc);
    Py_DECREF(ctx);
  }
  Py_DECREF(filter);
  return loc;
}

// location(traceback, *, filter=None, context=None, limit=None): a Traceback captured earlier
// (trace, then emit) instead of the calling thread's stack.
__attribute__((noinline)) PyObject *location_of_traceback(PyObject *tb, PyObject *const *args,
                                                          Py_ssize_t nargs, PyObject *kwnames) {
  PyObject *slots[kAll] = {nullptr, nullptr, nullptr, nullptr};
  if (!detail::bind_fastcall_args("location", kNames, kAll, 0, args, nargs, kwnames, slots))
    return nullptr;
  if (slots[1]) {
    PyErr_SetString(PyExc_TypeError,
                    "location(): skip= applies to the calling thread's stack, not to a Traceback");
    return nullptr;
  }
  return locate_with(slots, false, [tb](ContextCache &cc, PyObject *filter, std::size_t limit) {
    return traceback_location(cc, filter, limit, tb);
  });
}

}  // namespace

PyObject *location_py(PyObject *, PyObject *const *args, Py_ssize_t nargs,
                      PyObject *kwnames) {
  if (nargs >= 1 && is_traceback(args[0]))
    return location_of_traceback(args[0], args + 1, nargs - 1, kwnames);
  PyObject *slots[kAll] = {nullptr, nullptr, nullptr, nullptr};
  if (!detail::bind_fastcall_args("location", kNames, kAll, 1, args, nargs, kwnames, slots))
    return nullptr;
  std::size_t skip = 0;
  if (slots[1] && !detail::parse_count(slots[1], "skip", 0, &skip)) return nullptr;
  return locate_with(slots, nargs >= 1,
                     [skip](ContextCache &cc, PyObject *filter, std::size_t limit) {
                       return stack_location(cc, filter, limit, skip);
                     });
}

void set_bindings_detector(PyObject *fn) noexcept {
  PyObject *old = detector;
  detector = Py_XNewRef(fn);
  Py_XDECREF(old);
}

}  // namespace callsite::mlir
