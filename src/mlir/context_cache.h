// mlir/context_cache.h — MLIR locations cached per ir.Context, at the levels JAX uses: whole
// raw stack → final location, kept-frame chain → CallSiteLoc, (code, lasti) → NameLoc.
#pragma once
#include <Python.h>

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "callsite/frame.h"
#include "mlir/bindings.h"

namespace callsite::mlir {

/// Frames stored as a cache key: owns a reference to each code object / executable.
struct FrameSeq {
  std::unique_ptr<RawFrame[]> frames;
  std::size_t n = 0;
  FrameSeq() = default;
  FrameSeq(const RawFrame *f, std::size_t count);
  FrameSeq(FrameSeq &&o) noexcept : frames(std::move(o.frames)), n(o.n) { o.n = 0; }
  FrameSeq &operator=(FrameSeq &&) noexcept;
  ~FrameSeq();
  bool equals(const RawFrame *f, std::size_t count) const noexcept;
};

std::uint64_t hash_frames(const RawFrame *f, std::size_t n, std::uint64_t seed) noexcept;

/// A hash table of frame sequences (+ two words of extra key) to locations.
class SeqTable {
 public:
  struct Entry {
    FrameSeq key;
    std::uint64_t extra0, extra1;
    PyObject *location;  ///< owned iff the table was created owning
  };
  explicit SeqTable(bool owning) : owning_(owning) {}
  ~SeqTable() { clear(); }
  PyObject *find(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
                 std::uint64_t e1) const noexcept;
  /// Stores `location` (a new reference is taken iff owning). False on allocation failure.
  bool insert(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
              std::uint64_t e1, PyObject *location) noexcept;
  void clear() noexcept;
  std::size_t size() const noexcept { return map_.size(); }

 private:
  std::unordered_multimap<std::uint64_t, Entry> map_;
  bool owning_;
};

struct RawFrameHash {
  std::size_t operator()(const RawFrame &f) const noexcept {
    return std::size_t((f.tagged >> 4) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(f.payload));
  }
};

/// Everything cached for one ir.Context. Holds no reference to the context itself (a weak
/// reference only); the locations it holds each hold the context, which is why it counts them
/// (`held`) and is dropped once they are all that keeps the context alive (sweep()).
struct ContextCache {
  BindingsObject *bindings;
  PyObject *context;  ///< borrowed: identity only
  PyObject *weakref;  ///< weak reference with a callback that drops this cache, or nullptr
  std::size_t held = 0;  ///< Location objects owned below (each holds the context)

  PyObject *unknown = nullptr;  ///< owned: Location.unknown()
  std::unordered_map<RawFrame, PyObject *, RawFrameHash> frames;  ///< owned: per (code, lasti)
  SeqTable chains{true};   ///< kept frames → CallSiteLoc chain (owned)
  SeqTable stacks{false};  ///< raw stack + filter stamp + limit → final location (borrowed)
  /// nameloc_wrap: Location.current → (inner → wrapped location). The current locations and
  /// the wrapped ones are owned; an inner one is owned only when it is not already ours (an
  /// explicit loc=), so every owned Location object is counted once.
  struct Wrapped {
    PyObject *wrapped;
    bool own_inner;
  };
  struct WrapGroup {
    PyObject *current;
    std::unordered_map<PyObject *, Wrapped> by_inner;
  };
  std::unordered_map<PyObject *, WrapGroup> wraps;

  std::uint64_t hits = 0, misses = 0;

  ~ContextCache();
  /// Drops the sequence-level caches (stacks, chains, wraps) — they may borrow from each other.
  void clear_sequences() noexcept;
  /// Drops the nameloc_wrap cache only (nothing borrows from it).
  void clear_wraps() noexcept;
  /// The per-frame locations too (and the sequences, which may borrow them).
  void clear_frames() noexcept;
  void clear_all() noexcept;
  std::size_t entries() const noexcept {
    std::size_t w = 0;
    for (const auto &g : wraps) w += g.second.by_inner.size();
    return frames.size() + chains.size() + stacks.size() + w + (unknown ? 1 : 0);
  }
};

/// The cache of `ctx` (a Context of bindings `b`), created on first use. nullptr + error.
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

/// Installs the gc callback; called once at module init.
bool init_context_caches() noexcept;

/// Takes ownership of one more Location object (counted in `held`).
inline PyObject *own(ContextCache &cc, PyObject *loc) noexcept {
  ++cc.held;
  return loc;
}

}  // namespace callsite::mlir

namespace callsite::mlir {

/// {"frames", "chains", "stacks", "wraps", "held", "hits", "misses", "entries"} for the cache
/// of `ctx`, or None when it has none. New reference.
PyObject *cache_info(PyObject *ctx) noexcept;

}  // namespace callsite::mlir
