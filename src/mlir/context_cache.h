// mlir/context_cache.h — MLIR locations cached per ir.Context: the whole raw stack → its final
// location here, and below it the chosen LocationBuilder's tables (kept-frame chain →
// CallSiteLoc, (code, lasti) → NameLoc), at the levels JAX uses. The registry of the caches and
// how each ends with its Context.
#pragma once
#include <Python.h>

#include <cstdint>
#include <memory>

#include "callsite/frame.h"
#include "core/stack_table.h"
#include "mlir/location_builder.h"

namespace callsite::mlir {

struct BindingsObject;  // mlir/bindings.h

/// Everything cached for one ir.Context. Holds no reference to the context itself (a weak
/// reference only); the locations it holds each hold the context, which is why it counts them
/// and is dropped once they are all that keeps the context alive (sweep()).
///
/// Owned jointly by the registry and by every lookup in progress (CacheHold): a lookup calls
/// into Python (reifiers, the bindings, finalizers), which may drop the cache from the registry
/// (clear_caches(), a sweep, another thread); the cache is freed when the last holder lets go.
class ContextCache {
 public:
  ContextCache(BindingsObject *b, PyObject *ctx, std::unique_ptr<LocationBuilder> builder) noexcept
      : bindings(b), context(ctx), builder(std::move(builder)) {}
  ~ContextCache();
  ContextCache(const ContextCache &) = delete;
  ContextCache &operator=(const ContextCache &) = delete;

  BindingsObject *const bindings;
  PyObject *context;  ///< borrowed: identity only (nullptr once the context died)
  PyObject *weakref = nullptr;  ///< weak reference whose callback drops this cache, or nullptr
  /// How this Context's locations are built (chosen once, by cache_for()); owns the tables
  /// below the whole-stack one.
  const std::unique_ptr<LocationBuilder> builder;

  // --- whole raw stack (+ filter stamp, limit) -> final location, borrowed ------------
  /// The location stored for the stack frames[0..n) under (stamp, limit), hashed `hash`, or
  /// nullptr. Borrowed from the builder's tables.
  PyObject *find_stack(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t stamp,
                       std::uint64_t limit) noexcept {
    const StackEntry *hit = stacks_.find(hash, f, n, [&](const StackEntry &e) {
      return e.stamp == stamp && e.limit == limit;
    });
    return hit ? hit->loc : nullptr;
  }
  /// `loc` must be owned by the builder's tables: only pointed at. The key's frames are taken
  /// from `key` (retained). False on allocation failure.
  bool store_stack(std::uint64_t hash, detail::StoredStack &&key, std::uint64_t stamp,
                   std::uint64_t limit, PyObject *loc) noexcept {
    return stacks_.insert(hash, std::move(key), StackEntry{stamp, limit, loc});
  }
  std::size_t stack_count() const noexcept { return stacks_.size(); }
  /// Counts one lookup of a stack's location: a hit when it was cached or made before, a miss
  /// when a new location was made (info()'s "hits" and "misses").
  void note_lookup(bool hit) noexcept { ++(hit ? hits_ : misses_); }

  /// Drops the whole-stack table and the builder's chain-level tables (which it borrows from).
  void clear_sequences() noexcept;
  /// The same and the builder's per-frame tables.
  void clear_all() noexcept;

  /// Location objects this cache owns (each holds one or more references to the context).
  std::size_t held() const noexcept { return builder->counts().held; }
  /// {"frames", "chains", "stacks", "wraps", "finals", "held", "hits", "misses", "entries"}
  /// (frames and chains: Python objects or raw handles, whichever builder builds). New ref.
  PyObject *info() const noexcept;

  /// One more holder (a lookup in progress, or the registry).
  void add_owner() noexcept { ++owners_; }
  /// One holder fewer; the last one frees the cache (which may run Python code: the locations
  /// it releases can free their context).
  friend void release_cache(ContextCache *cc) noexcept;

 private:
  struct StackEntry {
    std::uint64_t stamp, limit;
    PyObject *loc;  ///< borrowed from the builder's tables
  };

  std::size_t owners_ = 1;  ///< the registry's (dropped by destroy()) + one per CacheHold
  detail::StackTable<StackEntry> stacks_{detail::FrameRefs::retained};
  std::uint64_t hits_ = 0, misses_ = 0;
};

void release_cache(ContextCache *cc) noexcept;

/// Keeps a cache alive while a lookup that calls into Python uses it (see ContextCache).
class CacheHold {
 public:
  explicit CacheHold(ContextCache *cc) noexcept : cc_(cc) {
    if (cc_) cc_->add_owner();
  }
  ~CacheHold() {
    if (cc_) release_cache(cc_);
  }
  CacheHold(const CacheHold &) = delete;
  CacheHold &operator=(const CacheHold &) = delete;

 private:
  ContextCache *cc_;
};

/// The cache of `ctx` (a Context of bindings `b`), created on first use. nullptr + error.
/// Borrowed from the registry: hold it (CacheHold) before calling into Python.
ContextCache *cache_for(BindingsObject *b, PyObject *ctx) noexcept;

/// The cache of `ctx` if there is one (no creation).
ContextCache *find_cache(PyObject *ctx) noexcept;

/// Drops the caches whose context is kept alive only by their own locations (so the context
/// is then freed). Runs after every garbage collection (gc.callbacks), when a new context is
/// seen and when the last auto_locations scope ends. Returns how many were dropped.
std::size_t sweep() noexcept;

/// Drops every cache (callsite.mlir.clear_caches()).
void clear_all_caches() noexcept;

/// Number of live caches.
std::size_t cache_count() noexcept;

/// Installs the gc callback; once at module init (python/init.cc).
bool init_context_caches() noexcept;

/// {"frames", ...} (ContextCache::info) for the cache of `ctx`, or None when it has none.
/// New reference.
PyObject *cache_info(PyObject *ctx) noexcept;

}  // namespace callsite::mlir
