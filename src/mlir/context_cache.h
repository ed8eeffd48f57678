// mlir/context_cache.h — MLIR locations cached per ir.Context, at the levels JAX uses: whole
// raw stack → final location, kept-frame chain → CallSiteLoc, (code, lasti) → NameLoc.
#pragma once
#include <Python.h>

#include <cstdint>
#include <memory>
#include <unordered_map>

#include "callsite/frame.h"
#include "mlir/flat_map.h"

namespace callsite::mlir {

struct BindingsObject;  // mlir/bindings.h

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

/// A hash table of frame sequences (+ two words of extra key) to values: ir.Location objects
/// (owned iff the table was created owning) or raw MlirLocation handles (never owning).
class SeqTable {
 public:
  struct Entry {
    FrameSeq key;
    std::uint64_t extra0, extra1;
    const void *value;  ///< a PyObject, owned iff the table was created owning
  };
  explicit SeqTable(bool owning) : owning_(owning) {}
  ~SeqTable() { clear(); }
  const void *find(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
                   std::uint64_t e1) const noexcept;
  /// Stores `value` (a new reference is taken iff owning). False on allocation failure.
  bool insert(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
              std::uint64_t e1, const void *value) noexcept;
  /// The same with a key already built (its frames retained).
  bool insert(std::uint64_t hash, FrameSeq &&key, std::uint64_t e0, std::uint64_t e1,
              const void *value) noexcept;
  void clear() noexcept;
  std::size_t size() const noexcept { return map_.size(); }

 private:
  std::unordered_multimap<std::uint64_t, Entry> map_;
  bool owning_;
};

inline PyObject *as_object(const void *p) noexcept {
  return static_cast<PyObject *>(const_cast<void *>(p));
}

struct RawFrameHash {
  std::size_t operator()(const RawFrame &f) const noexcept {
    return std::size_t((f.tagged >> 4) * 0x9E3779B97F4A7C15ull ^ std::uint64_t(f.payload));
  }
};

/// Everything cached for one ir.Context. Holds no reference to the context itself (a weak
/// reference only); the locations it holds each hold the context, which is why it counts them
/// and is dropped once they are all that keeps the context alive (sweep()). The count is
/// private: every Location object enters through one of the store_* members below, which take
/// its reference and count it, and leaves through a clear_* member.
///
/// Owned jointly by the registry and by every lookup in progress (CacheHold): a lookup calls
/// into Python (reifiers, the bindings, finalizers), which may drop the cache from the registry
/// (clear_caches(), a sweep, another thread); the cache is freed when the last holder lets go.
class ContextCache {
 public:
  ContextCache(BindingsObject *b, PyObject *ctx) noexcept : bindings(b), context(ctx) {}
  ~ContextCache();
  ContextCache(const ContextCache &) = delete;
  ContextCache &operator=(const ContextCache &) = delete;

  BindingsObject *const bindings;
  PyObject *context;  ///< borrowed: identity only (nullptr once the context died)
  PyObject *weakref = nullptr;  ///< weak reference whose callback drops this cache, or nullptr

  // --- (code, lasti) -> frame NameLoc -------------------------------------------------
  PyObject *find_frame(const RawFrame &frame) const noexcept {
    auto it = frames_.find(frame);
    return it != frames_.end() ? it->second : nullptr;
  }
  /// Takes `loc` (a new reference) for `frame`. Returns the stored location (borrowed: `loc`,
  /// or the one a re-entrant call stored first, `loc` then released), nullptr + MemoryError.
  PyObject *store_frame(const RawFrame &frame, PyObject *loc) noexcept;
  std::size_t frame_count() const noexcept { return frames_.size() + raw_frames_.size(); }

  // --- Location.unknown() -------------------------------------------------------------
  PyObject *unknown() const noexcept { return unknown_; }
  void store_unknown(PyObject *loc) noexcept;  ///< takes the new reference `loc`

  // --- kept-frame chains -> CallSiteLoc -----------------------------------------------
  PyObject *find_chain(std::uint64_t hash, const RawFrame *f, std::size_t n) const noexcept {
    return as_object(chains_.find(hash, f, n, 0, 0));
  }
  /// Keeps a reference of its own to `loc`; false on allocation failure.
  bool store_chain(std::uint64_t hash, const RawFrame *f, std::size_t n, PyObject *loc) noexcept;

  // --- whole raw stack (+ filter stamp, limit) -> final location, borrowed ------------
  PyObject *find_stack(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t stamp,
                       std::uint64_t limit) noexcept {
    PyObject *hit = as_object(stacks_.find(hash, f, n, stamp, limit));
    note_lookup(hit != nullptr);
    return hit;
  }
  /// The same, not counted (the C API path counts a lookup by whether its final location was
  /// made before: see note_lookup).
  PyObject *peek_stack(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t stamp,
                       std::uint64_t limit) const noexcept {
    return as_object(stacks_.find(hash, f, n, stamp, limit));
  }
  /// Counts one lookup of a stack's location: a hit when it was cached, a miss when a new
  /// location was made (info()'s "hits" and "misses").
  void note_lookup(bool hit) noexcept { ++(hit ? hits_ : misses_); }
  /// `loc` must be owned by the frame, chain or final table (or be unknown()): only pointed
  /// at. The key's frames are taken from `key` (already retained).
  bool store_stack(std::uint64_t hash, FrameSeq &&key, std::uint64_t stamp, std::uint64_t limit,
                   PyObject *loc) noexcept {
    return stacks_.insert(hash, std::move(key), stamp, limit, loc);
  }
  std::size_t stack_count() const noexcept { return stacks_.size(); }

  // --- MLIR's C API path (mlir/capi.h): raw handles, one ir.Location per final location ---
  /// The MlirContext of `context` when this cache builds through the C API, else nullptr. The
  /// raw handles below belong to that context; they are valid while it lives, and the cache
  /// is dropped when it dies (it is made only with a weak reference to the context).
  void *mlir_context = nullptr;
  const void *find_raw_frame(const RawFrame &frame) const noexcept {
    const void *const *hit = raw_frames_.find(frame);
    return hit ? *hit : nullptr;
  }
  /// False on allocation failure.
  bool store_raw_frame(const RawFrame &frame, const void *loc) noexcept;
  /// The link callsite(`callee`'s location at `caller`): a chain is a path in a trie of links
  /// keyed by (frame, the raw location of its callers), so a lookup is one probe per frame and
  /// storing copies no frame sequence (MLIR's locations are uniqued: equal chains are one
  /// pointer).
  const void *find_raw_link(const RawFrame &callee, const void *caller) const noexcept {
    const void *const *hit = raw_links_.find(LinkKey{callee, caller});
    return hit ? *hit : nullptr;
  }
  /// False on allocation failure. `callee` must be a key of the frame table stored or found
  /// with no Python code run since: the link table holds no reference of its own.
  bool store_raw_link(const RawFrame &callee, const void *caller, const void *loc) noexcept;
  /// The previous chain built (kept frames innermost first, and each S_i, the raw location of
  /// kept[i..]): the next op of a kernel shares its outer frames, whose links it then takes
  /// from here instead of probing the trie. Its frames are keys of the raw tables (which hold
  /// their code), so it is emptied whenever those are (`chain_epoch` counts that).
  static constexpr std::size_t kChainMemo = 32;
  struct ChainMemo {
    std::size_t n = 0;
    RawFrame frames[kChainMemo];
    const void *locs[kChainMemo];
  } chain_memo;
  std::uint64_t chain_epoch = 0;
  /// The ir.Location made of a raw final location (borrowed), or nullptr.
  PyObject *find_final(const void *raw) const noexcept {
    PyObject *const *hit = finals_.find(raw);
    return hit ? *hit : nullptr;
  }
  /// Takes `loc` (a new reference) for `raw`. Returns the stored location (borrowed: `loc`, or
  /// the one a re-entrant call stored first, `loc` then released), nullptr + MemoryError.
  PyObject *store_final(const void *raw, PyObject *loc) noexcept;
  /// The typed location (ir.CallSiteLoc...) an explicit location() returns for a final
  /// location `plain` (borrowed), or nullptr. Keyed by the plain object: a key of the final
  /// table, emptied with it, so a key is alive while it is here.
  PyObject *find_typed(PyObject *plain) const noexcept {
    auto it = typed_.find(plain);
    return it != typed_.end() ? it->second : nullptr;
  }
  /// Takes `typed` (a new reference) for `plain`, the final location of `raw`; stored only
  /// while `plain` is still that of `raw` in the final table (Python code ran since it was
  /// looked up, and may have cleared it). Returns a new reference: the stored location
  /// (`typed`, or the one a re-entrant call stored first), or `typed` when not stored.
  /// nullptr + MemoryError.
  PyObject *store_typed(const void *raw, PyObject *plain, PyObject *typed) noexcept;

  // --- nameloc_wrap: (Location.current, inner) -> wrapped -----------------------------
  PyObject *find_wrap(PyObject *current, PyObject *inner) const noexcept;
  /// Takes the new reference `wrapped`; keeps `current` alive, and `inner` when `own_inner`
  /// (it is not one of this cache's own). Returns the stored location (borrowed: `wrapped`,
  /// or the one a re-entrant call stored first), nullptr + MemoryError.
  PyObject *store_wrap(PyObject *current, PyObject *inner, PyObject *wrapped,
                       bool own_inner) noexcept;

  /// Drops the sequence-level caches (stacks, chains, wraps) — they may borrow from each other.
  void clear_sequences() noexcept;
  /// Drops the nameloc_wrap cache only (nothing borrows from it).
  void clear_wraps() noexcept;
  /// The per-frame locations too (and the sequences, which may borrow them).
  void clear_frames() noexcept;
  void clear_all() noexcept;

  /// Location objects this cache owns (each holds one or more references to the context).
  std::size_t held() const noexcept { return held_; }
  /// {"frames", "chains", "stacks", "wraps", "finals", "held", "hits", "misses", "entries"}
  /// (frames and chains: Python objects or raw handles, whichever path builds). New ref.
  PyObject *info() const noexcept;

  /// One more holder (a lookup in progress, or the registry).
  void add_owner() noexcept { ++owners_; }
  /// One holder fewer; the last one frees the cache (which may run Python code: the locations
  /// it releases can free their context).
  friend void release_cache(ContextCache *cc) noexcept;

 private:
  std::size_t wrap_count() const noexcept;

  std::size_t owners_ = 1;  ///< the registry's (dropped by destroy()) + one per CacheHold

  std::size_t held_ = 0;
  PyObject *unknown_ = nullptr;                                    ///< owned
  std::unordered_map<RawFrame, PyObject *, RawFrameHash> frames_;  ///< owned; keys retained
  SeqTable chains_{true};   ///< owned
  SeqTable stacks_{false};  ///< borrowed from frames_/chains_/unknown_
  /// Location.current -> (inner -> wrapped). The current locations and the wrapped ones are
  /// owned; an inner one only when it is not already ours (an explicit loc=), so every owned
  /// Location object is counted once.
  struct Wrapped {
    PyObject *wrapped;
    bool own_inner;
  };
  struct WrapGroup {
    PyObject *current;
    std::unordered_map<PyObject *, Wrapped> by_inner;
  };
  std::unordered_map<PyObject *, WrapGroup> wraps_;
  FlatMap<RawFrame, const void *, RawFrameHash, 128> raw_frames_;  ///< keys retained
  struct LinkKey {
    RawFrame callee;
    const void *caller;
    friend bool operator==(const LinkKey &a, const LinkKey &b) noexcept {
      return a.callee == b.callee && a.caller == b.caller;
    }
  };
  struct LinkKeyHash {
    std::size_t operator()(const LinkKey &k) const noexcept {
      return RawFrameHash()(k.callee) ^
             std::size_t(reinterpret_cast<std::uintptr_t>(k.caller) * 0xC2B2AE3D27D4EB4Full);
    }
  };
  /// Holds no references: every callee frame is a key of raw_frames_ (store_raw_link).
  FlatMap<LinkKey, const void *, LinkKeyHash, 512> raw_links_;
  struct PointerHash {
    std::size_t operator()(const void *p) const noexcept {
      return std::size_t(reinterpret_cast<std::uintptr_t>(p) >> 3);
    }
  };
  FlatMap<const void *, PyObject *, PointerHash, 256> finals_;  ///< raw -> ir.Location, owned
  /// A final ir.Location (borrowed from finals_) -> its typed location (owned). A node-based
  /// map: empty in every Context whose locations no explicit location() asked for.
  std::unordered_map<PyObject *, PyObject *> typed_;
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
