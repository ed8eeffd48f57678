// mlir/locate.cc — stack → location: the walk, the whole-stack cache, the filter, then the
// Context's builder (mlir/location_builder.h).
#include "mlir/locate.h"

#include <exception>

#include "capture/capture.h"
#include "capture/traceback_storage.h"
#include "core/args.h"
#include "core/small_buffer.h"
#include "core/stack_table.h"
#include "filter/filter.h"
#include "filter/scan_kept.h"
#include "mlir/bindings.h"
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

// A location of kept frames, through the cache's builder, within the bound on per-frame
// entries. Borrowed from the builder's tables.
inline PyObject *bounded_kept_location(ContextCache &cc, const RawFrame *kept, std::size_t k,
                                       bool *made_before) {
  if (cc.builder->frame_count() + k > kMaxFrames) cc.clear_all();  // before anything is borrowed
  return cc.builder->kept_location(kept, k, made_before);
}

// The one whole-stack path: the whole-stack table's key is the raw frames, the filter's stamp
// and the limit, so a hit is one hash and one comparison; a miss filters, builds through the
// builder's tables and stores the result. A builder that does not store first stacks
// (LocationBuilder::stores_first_stacks: the C API one) has a stack stored only once its
// location is one this Context made before (a stack that repeats, or another stack with the
// same location): a kernel built again in the same Context then hits, and a new Context's
// empty table is not even hashed. `walk` (nullptr for a Traceback's frames) may be a prefix
// (stack_location): it is extended until `limit` frames are kept.
__attribute__((always_inline)) inline PyObject *frames_location(
    ContextCache &cc, PyObject *filter, std::size_t limit, const RawFrame *frames,
    std::size_t n, WalkEnd end, StackWalk *walk) {
  // MLIR's rule: an explicit limit replaces the filter's.
  if (limit == SIZE_MAX) limit = detail::limit_of(filter);
  const std::uint64_t generation =
      detail::generation_of(filter) | (end == WalkEnd::at_boundary ? kAtBoundaryKey : 0);
  const bool store_first = cc.builder->stores_first_stacks;
  std::uint64_t hash = 0;
  const bool hashed = store_first || cc.stack_count() != 0;
  if (hashed) {
    hash = detail::hash_frames(frames, n, stack_seed(generation, limit));
    if (PyObject *hit = cc.find_stack(hash, frames, n, generation, limit)) {
      cc.note_lookup(true);
      return Py_NewRef(hit);
    }
    if (cc.stack_count() >= kMaxStacks) cc.clear_sequences();
  }
  // The limit counts kept frames; the walk goes on past dropped ones (as MLIR's does). Kept
  // frames live on the C stack up to MLIR's usual limits (no allocation per miss).
  const bool prefix = walk && !walk->complete();
  detail::SmallBuffer<RawFrame, kInlineKept> kept;
  if (!kept.reserve(prefix || limit < n ? limit : n)) return PyErr_NoMemory();
  // From here on Python code runs (reifiers, the filter's rules, the bindings) and may pop the
  // native frames of a walk, freeing their executables: the walk's are retained (a Traceback's
  // are its own; Python frames' code objects belong to frames still running). A walk has
  // native entries only when this thread has native frames (no Python code ran since it).
  if (walk && native::innermost()) walk->hold_native_entries();
  std::size_t k = detail::keep_frames(filter, frames, n, kept.data(), limit, end);
  // A prefix (no kernel boundary in force: stack_location walks those whole) that kept fewer
  // than `limit` frames: scan_kept walks further until it keeps them (the frames below this
  // call are the same after the Python code the decisions ran).
  if (prefix && k != SIZE_MAX && k < limit &&
      detail::scan_kept(*walk, detail::as_filter(filter), limit, &k, kept.data()) == SIZE_MAX)
    return nullptr;
  if (k == SIZE_MAX) return nullptr;
  bool made_before = false;
  PyObject *loc = Py_XNewRef(bounded_kept_location(cc, kept.data(), k, &made_before));
  if (!loc) return nullptr;
  cc.note_lookup(made_before);
  if (!store_first && !made_before) return loc;
  // `loc` is owned by the builder's tables; the whole-stack table only points at it. Its key is
  // the whole stack (a prefix walk has no boundary: the generation stays that of its end).
  if (prefix) walk->walk_all();
  if (walk) {
    frames = walk->data();
    n = walk->size();
  }
  if (!hashed) hash = detail::hash_frames(frames, n, stack_seed(generation, limit));
  detail::StoredStack key;
  try {
    key = detail::StoredStack(frames, n, detail::FrameRefs::retained);
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

}  // namespace

PyObject *stack_location(ContextCache &cc, PyObject *filter, std::size_t limit,
                         std::size_t skip) {
  // Through the C API with no whole stack stored in this Context (every op of a new one), only
  // the frames up to the limit's last kept one are read: a prefix is walked first (not under a
  // kernel boundary, which a complete walk finds, and not past what fits kept inline).
  const std::size_t resolved = limit == SIZE_MAX ? detail::limit_of(filter) : limit;
  const bool prefix =
      !cc.builder->stores_first_stacks && !cc.stack_count() && resolved <= kInlineKept;
  StackWalk stack(skip, prefix ? resolved + kPrefixSlack : kStackBuffer);
  if (!prefix || stack.bounded()) stack.walk_all();
  return frames_location(cc, filter, limit, stack.data(), stack.size(), stack.end(), &stack);
}

PyObject *traceback_location(ContextCache &cc, PyObject *filter, std::size_t limit,
                             PyObject *tb) {
  return frames_location(cc, filter, limit, traceback_frames(tb), traceback_size(tb),
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
  detail::SmallBuffer<RawFrame, kInlineKept> kept;
  if (!kept.reserve(n < limit ? n : limit)) {
    Py_DECREF(window);
    return PyErr_NoMemory();
  }
  const std::size_t k = detail::keep_frames(filter, frames, n, kept.data(), limit);
  // No whole-stack cache: a window is not a stack; the builder's tables still apply.
  if (k != SIZE_MAX) loc = Py_XNewRef(bounded_kept_location(cc, kept.data(), k, nullptr));
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
    // The C API builder's locations are plain ir.Location objects: the caller gets the typed
    // one, as from the Python API builder (the op builders take the plain one, see
    // mlir/injector.cc).
    if (loc) loc = cc->builder->explicit_location(loc);
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
