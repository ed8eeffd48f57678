// mlir/context_cache.cc — per-context location caches, and how they end with their context.
//
// A cached ir.Location holds a strong reference to its ir.Context (PyMlirContextRef), so a
// cache of locations would keep its context alive forever. Instead each cache counts the
// locations it owns; once the context's refcount is no more than what those locations hold,
// nothing else can reach the context and the cache is dropped, which frees the context.
// A weak reference covers bindings whose locations do not hold their context.
#include "mlir/context_cache.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "core/frame_refs.h"
#include "mlir/bindings.h"
#include "mlir/capi.h"

namespace callsite::mlir {
namespace {

std::vector<ContextCache *> caches;
ContextCache *last = nullptr;      // the cache used most recently (hot-path shortcut)
ContextCache *ephemeral = nullptr;  // a cache whose context's death we cannot observe
bool sweeping = false;
PyObject *weakref_callback = nullptr;

using detail::release;
using detail::retain;

// Unlinks `cc` from the registry and drops the registry's reference: the cache is freed (which
// may free its context) now, or by the last lookup still using it.
void destroy(ContextCache *cc) {
  auto it = std::find(caches.begin(), caches.end(), cc);
  if (it != caches.end()) caches.erase(it);
  if (last == cc) last = nullptr;
  if (ephemeral == cc) ephemeral = nullptr;
  release_cache(cc);
}

// The context died (weak reference callback): its locations did not keep it alive.
PyObject *on_context_dead(PyObject *, PyObject *weakref) {
  for (ContextCache *cc : caches)
    if (cc->weakref == weakref) {
      cc->context = nullptr;
      destroy(cc);
      break;
    }
  Py_RETURN_NONE;
}
PyMethodDef on_context_dead_def = {"_callsite_mlir_context_dead", on_context_dead, METH_O, nullptr};

// gc.callbacks entry: sweep after every collection.
PyObject *on_gc(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs >= 1 && PyUnicode_Check(args[0]) &&
      PyUnicode_CompareWithASCIIString(args[0], "stop") == 0 && !caches.empty())
    sweep();
  Py_RETURN_NONE;
}
PyMethodDef on_gc_def = {"_callsite_mlir_sweep", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(on_gc)),
                         METH_FASTCALL, nullptr};

bool only_we_hold(const ContextCache *cc) {
  const int per = cc->bindings->refs_per_location;
  if (!cc->context || per <= 0) return false;
  return std::size_t(Py_REFCNT(cc->context)) <= cc->held() * std::size_t(per);
}

// One Location object holds how many references to its context? Measured, not assumed.
void calibrate(BindingsObject *b, PyObject *ctx) {
  if (b->refs_per_location >= 0) return;
  const Py_ssize_t before = Py_REFCNT(ctx);
  PyObject *kw = Py_BuildValue("{sO}", "context", ctx);
  PyObject *empty = PyTuple_New(0);
  PyObject *loc = kw && empty ? PyObject_Call(b->loc_unknown, empty, kw) : nullptr;
  Py_XDECREF(kw);
  Py_XDECREF(empty);
  if (!loc) {
    PyErr_Clear();
    return;
  }
  b->refs_per_location = int(Py_REFCNT(ctx) - before);
  Py_DECREF(loc);
}

}  // namespace

FrameSeq::FrameSeq(const RawFrame *f, std::size_t count) : frames(new RawFrame[count ? count : 1]), n(count) {
  if (count) std::memcpy(frames.get(), f, count * sizeof(RawFrame));  // memcpy's source may not be null
  for (std::size_t i = 0; i < n; ++i) retain(frames[i]);
}

FrameSeq &FrameSeq::operator=(FrameSeq &&o) noexcept {
  if (this != &o) {
    for (std::size_t i = 0; i < n; ++i) release(frames[i]);
    frames = std::move(o.frames);
    n = o.n;
    o.n = 0;
  }
  return *this;
}

FrameSeq::~FrameSeq() {
  for (std::size_t i = 0; i < n; ++i) release(frames[i]);
}

bool FrameSeq::equals(const RawFrame *f, std::size_t count) const noexcept {
  return n == count && std::memcmp(frames.get(), f, count * sizeof(RawFrame)) == 0;
}

std::uint64_t hash_frames(const RawFrame *f, std::size_t n, std::uint64_t seed) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull ^ seed ^ (std::uint64_t(n) << 48);
  for (std::size_t i = 0; i < n; ++i) {
    h = (h ^ f[i].tagged) * 0x100000001b3ull;
    h = (h ^ std::uint64_t(f[i].payload)) * 0x100000001b3ull;
    h ^= h >> 29;
  }
  return h;
}

const void *SeqTable::find(std::uint64_t hash, const RawFrame *f, std::size_t n,
                           std::uint64_t e0, std::uint64_t e1) const noexcept {
  auto range = map_.equal_range(hash);
  for (auto it = range.first; it != range.second; ++it)
    if (it->second.extra0 == e0 && it->second.extra1 == e1 && it->second.key.equals(f, n))
      return it->second.value;
  return nullptr;
}

bool SeqTable::insert(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
                      std::uint64_t e1, const void *value) noexcept {
  try {
    map_.emplace(hash, Entry{FrameSeq(f, n), e0, e1, value});
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return false;
  }
  if (owning_) Py_INCREF(as_object(value));
  return true;
}

bool SeqTable::insert(std::uint64_t hash, FrameSeq &&key, std::uint64_t e0, std::uint64_t e1,
                      const void *value) noexcept {
  try {
    map_.emplace(hash, Entry{std::move(key), e0, e1, value});
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return false;
  }
  if (owning_) Py_INCREF(as_object(value));
  return true;
}

void SeqTable::clear() noexcept {
  if (owning_) {
    std::vector<PyObject *> locs;  // decref after the map is consistent (dealloc may re-enter)
    locs.reserve(map_.size());
    for (auto &kv : map_) locs.push_back(as_object(kv.second.value));
    map_.clear();
    for (PyObject *l : locs) Py_DECREF(l);
  } else {
    map_.clear();
  }
}

PyObject *ContextCache::store_frame(const RawFrame &frame, PyObject *loc) noexcept {
  try {
    auto [it, inserted] = frames_.emplace(frame, loc);
    if (!inserted) {  // built meanwhile by a re-entrant call: keep the first
      Py_DECREF(loc);
      return it->second;
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(loc);
    PyErr_NoMemory();
    return nullptr;
  }
  ++held_;
  retain(frame);  // the key's reference, released with the entry
  return loc;
}

bool ContextCache::store_raw_frame(const RawFrame &frame, const void *loc) noexcept {
  const auto [stored, inserted] = raw_frames_.insert(frame, loc);
  if (inserted) retain(frame);  // the key's reference, released with the entry
  return stored != nullptr;     // else a re-entrant call's: the same location (uniqued)
}

bool ContextCache::store_raw_link(const RawFrame &callee, const void *caller,
                                  const void *loc) noexcept {
  // No reference: the callee was looked up in, or stored into, raw_frames_ just before (no
  // Python code ran since), and raw_frames_ is cleared only after the links.
  return raw_links_.insert(LinkKey{callee, caller}, loc).first != nullptr;
}

PyObject *ContextCache::store_final(const void *raw, PyObject *loc) noexcept {
  const auto [stored, inserted] = finals_.insert(raw, loc);
  if (!stored) {  // out of memory
    Py_DECREF(loc);
    PyErr_NoMemory();
    return nullptr;
  }
  if (!inserted) {  // made meanwhile by a re-entrant call: keep the first
    Py_DECREF(loc);
    return *stored;
  }
  ++held_;
  return loc;
}

PyObject *ContextCache::store_typed(const void *raw, PyObject *plain, PyObject *typed) noexcept {
  if (find_final(raw) != plain) return typed;  // the final table was cleared meanwhile
  try {
    auto [it, inserted] = typed_.emplace(plain, typed);
    if (!inserted) {  // made meanwhile by a re-entrant call: keep the first
      Py_DECREF(typed);
      return Py_NewRef(it->second);
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(typed);
    return PyErr_NoMemory();
  }
  ++held_;
  return Py_NewRef(typed);
}

void ContextCache::store_unknown(PyObject *loc) noexcept {
  if (unknown_) {
    Py_DECREF(loc);
    return;
  }
  unknown_ = loc;
  ++held_;
}

bool ContextCache::store_chain(std::uint64_t hash, const RawFrame *f, std::size_t n,
                               PyObject *loc) noexcept {
  if (!chains_.insert(hash, f, n, 0, 0, loc)) return false;
  ++held_;
  return true;
}

PyObject *ContextCache::find_wrap(PyObject *current, PyObject *inner) const noexcept {
  auto group = wraps_.find(current);
  if (group == wraps_.end()) return nullptr;
  auto hit = group->second.by_inner.find(inner);
  return hit != group->second.by_inner.end() ? hit->second.wrapped : nullptr;
}

PyObject *ContextCache::store_wrap(PyObject *current, PyObject *inner, PyObject *wrapped,
                                   bool own_inner) noexcept {
  // Every `with ir.Location.name(...)` is a new current location: bound the groups.
  constexpr std::size_t kMaxWrapGroups = 1024;
  auto group = wraps_.find(current);
  if (group == wraps_.end() && wraps_.size() >= kMaxWrapGroups) clear_wraps();
  try {
    if (group == wraps_.end()) {
      group = wraps_.emplace(current, WrapGroup{current, {}}).first;
      Py_INCREF(current);
      ++held_;
    }
    auto [it, inserted] = group->second.by_inner.emplace(inner, Wrapped{wrapped, own_inner});
    if (!inserted) {  // built meanwhile by a re-entrant call: keep the first
      Py_DECREF(wrapped);
      return it->second.wrapped;
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(wrapped);
    PyErr_NoMemory();
    return nullptr;
  }
  ++held_;
  if (own_inner) {
    Py_INCREF(inner);
    ++held_;
  }
  return wrapped;
}

std::size_t ContextCache::wrap_count() const noexcept {
  std::size_t w = 0;
  for (const auto &g : wraps_) w += g.second.by_inner.size();
  return w;
}

PyObject *ContextCache::info() const noexcept {
  const std::size_t wraps = wrap_count();
  const std::size_t frames = frames_.size() + raw_frames_.size();
  const std::size_t chains = chains_.size() + raw_links_.size();
  const std::size_t entries = frames + chains + stacks_.size() + wraps + finals_.size() +
                              typed_.size() + (unknown_ ? 1 : 0);
  return Py_BuildValue("{sn sn sn sn sn sn sK sK sn}", "frames", Py_ssize_t(frames), "chains",
                       Py_ssize_t(chains), "stacks", Py_ssize_t(stacks_.size()), "wraps",
                       Py_ssize_t(wraps), "finals", Py_ssize_t(finals_.size()), "held",
                       Py_ssize_t(held_), "hits", (unsigned long long)hits_, "misses",
                       (unsigned long long)misses_, "entries", Py_ssize_t(entries));
}

void ContextCache::clear_wraps() noexcept {
  std::vector<PyObject *> drop;  // decref after the map is consistent (dealloc may re-enter)
  for (auto &g : wraps_) {
    drop.push_back(g.second.current);
    for (auto &kv : g.second.by_inner) {
      drop.push_back(kv.second.wrapped);
      if (kv.second.own_inner) drop.push_back(kv.first);
    }
  }
  held_ -= drop.size();
  wraps_.clear();
  for (PyObject *o : drop) Py_DECREF(o);
}

void ContextCache::clear_sequences() noexcept {
  clear_wraps();
  stacks_.clear();
  held_ -= chains_.size();
  chains_.clear();
  chain_memo.n = 0;
  ++chain_epoch;
  // The tables are emptied before anything is released (a release may run Python code). The
  // links hold no references of their own: each link's callee frame is a key of raw_frames_,
  // which is cleared only after them.
  std::vector<PyObject *> drop;  // the stacks pointed at these (already cleared)
  // The typed locations are keyed by final ones: emptied with them.
  for (auto &kv : typed_) drop.push_back(kv.second);
  finals_.for_each([&](const void *, PyObject *loc) { drop.push_back(loc); });
  typed_.clear();
  raw_links_.clear();
  finals_.clear();
  held_ -= drop.size();
  for (PyObject *o : drop) Py_DECREF(o);
}

void ContextCache::clear_frames() noexcept {
  clear_sequences();  // they may borrow per-frame locations
  std::vector<PyObject *> drop;
  std::vector<RawFrame> keys;
  for (auto &kv : frames_) {
    drop.push_back(kv.second);
    keys.push_back(kv.first);
  }
  raw_frames_.for_each([&](const RawFrame &k, const void *) { keys.push_back(k); });
  frames_.clear();
  raw_frames_.clear();
  held_ -= drop.size();
  for (PyObject *o : drop) Py_DECREF(o);
  for (const RawFrame &k : keys) release(k);
}

void ContextCache::clear_all() noexcept {
  clear_frames();
  PyObject *u = unknown_;
  unknown_ = nullptr;
  if (u) {
    --held_;
    Py_DECREF(u);
  }
}

ContextCache::~ContextCache() {
  Py_CLEAR(weakref);  // first: a context freed below must not call back into a dead cache
  clear_all();
}

ContextCache *find_cache(PyObject *ctx) noexcept {
  if (last && last->context == ctx) return last;
  for (ContextCache *cc : caches)
    if (cc->context == ctx) return last = cc;
  return nullptr;
}

void release_cache(ContextCache *cc) noexcept {
  if (--cc->owners_ == 0) delete cc;
}

ContextCache *cache_for(BindingsObject *b, PyObject *ctx) noexcept {
  if (ContextCache *cc = find_cache(ctx)) return cc;
  if (ephemeral) destroy(ephemeral);
  calibrate(b, ctx);
  sweep();
  void *mlir_context = location_capi(b) ? context_pointer(b, ctx) : nullptr;
  // All three ran Python code (the bindings, finalizers), which may have made this context's
  // cache.
  if (ContextCache *cc = find_cache(ctx)) return cc;
  auto *cc = new (std::nothrow) ContextCache(b, ctx);
  if (!cc) {
    PyErr_NoMemory();
    return nullptr;
  }
  cc->weakref = PyWeakref_NewRef(ctx, weakref_callback);
  if (!cc->weakref) {
    PyErr_Clear();
    // Neither a weak reference nor held references tell us when this context dies: keep the
    // cache only until the next lookup of another context.
    if (b->refs_per_location <= 0) ephemeral = cc;
  } else {
    // Raw handles only where the context's death is seen (the weak reference): they must not
    // outlive it, and they do not keep it alive as ir.Location objects do.
    cc->mlir_context = mlir_context;
  }
  caches.push_back(cc);
  return last = cc;
}

std::size_t sweep() noexcept {
  if (sweeping) return 0;
  sweeping = true;
  std::size_t dropped = 0;
  for (bool again = true; again;) {  // dropping one cache can release another context's refs
    again = false;
    for (ContextCache *cc : caches)
      if (only_we_hold(cc)) {
        destroy(cc);
        ++dropped;
        again = true;
        break;
      }
  }
  sweeping = false;
  return dropped;
}

void clear_all_caches() noexcept {
  while (!caches.empty()) destroy(caches.back());
}

std::size_t cache_count() noexcept { return caches.size(); }

bool init_context_caches() noexcept {
  if (weakref_callback) return true;
  weakref_callback = PyCFunction_New(&on_context_dead_def, nullptr);
  PyObject *gc_cb = PyCFunction_New(&on_gc_def, nullptr);
  PyObject *gc = PyImport_ImportModule("gc");
  PyObject *callbacks = gc ? PyObject_GetAttrString(gc, "callbacks") : nullptr;
  const bool ok = weakref_callback && gc_cb && callbacks && PyList_Append(callbacks, gc_cb) == 0;
  Py_XDECREF(callbacks);
  Py_XDECREF(gc);
  Py_XDECREF(gc_cb);
  return ok;
}

PyObject *cache_info(PyObject *ctx) noexcept {
  for (ContextCache *c : caches)
    if (c->context == ctx) return c->info();
  Py_RETURN_NONE;
}

}  // namespace callsite::mlir
