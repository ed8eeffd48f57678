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

namespace callsite::mlir {
namespace {

std::vector<ContextCache *> caches;
ContextCache *last = nullptr;      // the cache used most recently (hot-path shortcut)
ContextCache *ephemeral = nullptr;  // a cache whose context's death we cannot observe
bool sweeping = false;
PyObject *weakref_callback = nullptr;

using detail::release;
using detail::retain;

// Unlinks `cc` from the registry, then frees it (which may free its context).
void destroy(ContextCache *cc) {
  auto it = std::find(caches.begin(), caches.end(), cc);
  if (it != caches.end()) caches.erase(it);
  if (last == cc) last = nullptr;
  if (ephemeral == cc) ephemeral = nullptr;
  delete cc;
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
  return std::size_t(Py_REFCNT(cc->context)) <= cc->held * std::size_t(per);
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
  std::memcpy(frames.get(), f, count * sizeof(RawFrame));
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

PyObject *SeqTable::find(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
                         std::uint64_t e1) const noexcept {
  auto range = map_.equal_range(hash);
  for (auto it = range.first; it != range.second; ++it)
    if (it->second.extra0 == e0 && it->second.extra1 == e1 && it->second.key.equals(f, n))
      return it->second.location;
  return nullptr;
}

bool SeqTable::insert(std::uint64_t hash, const RawFrame *f, std::size_t n, std::uint64_t e0,
                      std::uint64_t e1, PyObject *location) noexcept {
  try {
    map_.emplace(hash, Entry{FrameSeq(f, n), e0, e1, location});
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    return false;
  }
  if (owning_) Py_INCREF(location);
  return true;
}

void SeqTable::clear() noexcept {
  if (owning_) {
    std::vector<PyObject *> locs;  // decref after the map is consistent (dealloc may re-enter)
    locs.reserve(map_.size());
    for (auto &kv : map_) locs.push_back(kv.second.location);
    map_.clear();
    for (PyObject *l : locs) Py_DECREF(l);
  } else {
    map_.clear();
  }
}

void ContextCache::clear_wraps() noexcept {
  std::vector<PyObject *> drop;  // decref after the map is consistent (dealloc may re-enter)
  for (auto &g : wraps) {
    drop.push_back(g.second.current);
    for (auto &kv : g.second.by_inner) {
      drop.push_back(kv.second.wrapped);
      if (kv.second.own_inner) drop.push_back(kv.first);
    }
  }
  held -= drop.size();
  wraps.clear();
  for (PyObject *o : drop) Py_DECREF(o);
}

void ContextCache::clear_sequences() noexcept {
  clear_wraps();
  stacks.clear();
  held -= chains.size();
  chains.clear();
}

void ContextCache::clear_frames() noexcept {
  clear_sequences();  // they may borrow per-frame locations
  std::vector<PyObject *> drop;
  std::vector<RawFrame> keys;
  for (auto &kv : frames) {
    drop.push_back(kv.second);
    keys.push_back(kv.first);
  }
  frames.clear();
  held -= drop.size();
  for (PyObject *o : drop) Py_DECREF(o);
  for (const RawFrame &k : keys) release(k);
}

void ContextCache::clear_all() noexcept {
  clear_frames();
  PyObject *u = unknown;
  unknown = nullptr;
  if (u) {
    --held;
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

ContextCache *cache_for(BindingsObject *b, PyObject *ctx) noexcept {
  if (ContextCache *cc = find_cache(ctx)) return cc;
  if (ephemeral) destroy(ephemeral);
  calibrate(b, ctx);
  sweep();
  auto *cc = new (std::nothrow) ContextCache();
  if (!cc) {
    PyErr_NoMemory();
    return nullptr;
  }
  cc->bindings = b;
  cc->context = ctx;
  cc->weakref = PyWeakref_NewRef(ctx, weakref_callback);
  if (!cc->weakref) {
    PyErr_Clear();
    // Neither a weak reference nor held references tell us when this context dies: keep the
    // cache only until the next lookup of another context.
    if (b->refs_per_location <= 0) ephemeral = cc;
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

}  // namespace callsite::mlir

namespace callsite::mlir {

PyObject *cache_info(PyObject *ctx) noexcept {
  ContextCache *cc = nullptr;
  for (ContextCache *c : caches)
    if (c->context == ctx) cc = c;
  if (!cc) Py_RETURN_NONE;
  std::size_t wraps = 0;
  for (const auto &g : cc->wraps) wraps += g.second.by_inner.size();
  return Py_BuildValue("{sn sn sn sn sn sK sK sn}", "frames", Py_ssize_t(cc->frames.size()),
                       "chains", Py_ssize_t(cc->chains.size()), "stacks",
                       Py_ssize_t(cc->stacks.size()), "wraps", Py_ssize_t(wraps), "held",
                       Py_ssize_t(cc->held), "hits", (unsigned long long)cc->hits, "misses",
                       (unsigned long long)cc->misses, "entries", Py_ssize_t(cc->entries()));
}

}  // namespace callsite::mlir
