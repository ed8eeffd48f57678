// mlir/context_cache.cc — per-context location caches, and how they end with their context.
//
// A cached ir.Location holds a strong reference to its ir.Context (PyMlirContextRef), so a
// cache of locations would keep its context alive forever. Instead each cache counts the
// locations it owns; once the context's refcount is no more than what those locations hold,
// nothing else can reach the context and the cache is dropped, which frees the context.
// A weak reference covers bindings whose locations do not hold their context.
#include "mlir/context_cache.h"

#include <algorithm>
#include <exception>
#include <new>
#include <vector>

#include "mlir/bindings.h"
#include "mlir/build_capi.h"
#include "mlir/build_python.h"
#include "mlir/capi.h"

namespace callsite::mlir {
namespace {

std::vector<ContextCache *> caches;
ContextCache *last = nullptr;      // the cache used most recently (hot-path shortcut)
ContextCache *ephemeral = nullptr;  // a cache whose context's death we cannot observe
bool sweeping = false;
PyObject *weakref_callback = nullptr;

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

void ContextCache::clear_sequences() noexcept {
  stacks_.clear([](const StackEntry &) {});  // first: it borrows from the builder's tables
  builder->clear_sequences();
}

void ContextCache::clear_all() noexcept {
  stacks_.clear([](const StackEntry &) {});
  builder->clear_all();
}

PyObject *ContextCache::info() const noexcept {
  const BuilderCounts c = builder->counts();
  const std::size_t entries =
      c.frames + c.chains + stacks_.size() + c.wraps + c.finals + c.other;
  return Py_BuildValue("{sn sn sn sn sn sn sK sK sn}", "frames", Py_ssize_t(c.frames), "chains",
                       Py_ssize_t(c.chains), "stacks", Py_ssize_t(stacks_.size()), "wraps",
                       Py_ssize_t(c.wraps), "finals", Py_ssize_t(c.finals), "held",
                       Py_ssize_t(c.held), "hits", (unsigned long long)hits_, "misses",
                       (unsigned long long)misses_, "entries", Py_ssize_t(entries));
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

namespace {

// cache_for()'s first sight of a context, out of line: the lookup of a known one is what every
// op pays, and stays small enough to inline into its callers.
[[gnu::noinline]] ContextCache *make_cache(BindingsObject *b, PyObject *ctx) noexcept {
  if (ContextCache *cc = find_cache(ctx)) return cc;
  if (ephemeral) destroy(ephemeral);
  calibrate(b, ctx);
  sweep();
  void *mlir_context = location_capi(b) ? context_pointer(b, ctx) : nullptr;
  // All three ran Python code (the bindings, finalizers), which may have made this context's
  // cache.
  if (ContextCache *cc = find_cache(ctx)) return cc;
  PyObject *weakref = PyWeakref_NewRef(ctx, weakref_callback);
  if (!weakref) PyErr_Clear();
  // The one choice of how this Context's locations are built. Raw handles only where the
  // context's death is seen (the weak reference): they must not outlive it, and they do not
  // keep it alive as ir.Location objects do.
  std::unique_ptr<LocationBuilder> builder = weakref && mlir_context
                                                 ? make_capi_builder(b, ctx, mlir_context)
                                                 : make_python_builder(b, ctx);
  auto *cc = builder ? new (std::nothrow) ContextCache(b, ctx, std::move(builder)) : nullptr;
  if (!cc) {
    Py_XDECREF(weakref);
    if (!PyErr_Occurred()) PyErr_NoMemory();
    return nullptr;
  }
  cc->weakref = weakref;
  // Neither a weak reference nor held references tell us when this context dies: keep the
  // cache only until the next lookup of another context.
  if (!weakref && b->refs_per_location <= 0) ephemeral = cc;
  try {
    caches.push_back(cc);
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    if (ephemeral == cc) ephemeral = nullptr;
    release_cache(cc);
    PyErr_NoMemory();
    return nullptr;
  }
  return last = cc;
}

}  // namespace

ContextCache *cache_for(BindingsObject *b, PyObject *ctx) noexcept {
  if (last && last->context == ctx) return last;
  return make_cache(b, ctx);
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
