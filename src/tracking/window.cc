// tracking/window.cc — the window type: allocation, registry, copy-out, release.
#include "tracking/window.h"

#include <cstring>

namespace callsite::tracking::detail {

PyThreadState *cache_tstate = nullptr;
Window *cache_window = nullptr;
PyThreadState *dead_tstate = nullptr;
std::uint64_t dead_tstate_id = 0;

PyTypeObject *window_type = nullptr;

namespace {

Window *registry = nullptr;
std::size_t registered = 0;

void release_all(OwnedCallSite *entries, std::uint32_t n) {
  // Read every slot out first: dropping a reference may run code that records calls.
  for (std::uint32_t i = 0; i < n; ++i) {
    PyCodeObject *code = entries[i].code, *callee = entries[i].callee;
    entries[i] = OwnedCallSite{nullptr, nullptr, 0};
    Py_XDECREF(code);
    Py_XDECREF(callee);
  }
}

void unlink(Window *r) {
  if (r->prev) r->prev->next = r->next;
  else if (registry == r) registry = r->next;
  if (r->next) r->next->prev = r->prev;
  r->prev = r->next = nullptr;
  --registered;
}

void window_dealloc(PyObject *self) {
  Window *r = reinterpret_cast<Window *>(self);
  if (cache_window == r) cache_tstate = nullptr, cache_window = nullptr;
  if (r->in_dict && r->tstate->dict == nullptr) {
    dead_tstate = r->tstate;
    dead_tstate_id = r->tstate_id;
  }
  if (!r->retired) unlink(r);
  OwnedCallSite *entries = r->entries;
  const std::uint32_t n = r->capacity;
  r->entries = nullptr;
  r->capacity = r->count = r->head = 0;
  if (entries) {
    release_all(entries, n);
    PyMem_Free(entries);
  }
  Py_CLEAR(r->chained_obj);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);  // heap type instances own a reference to their type
}

PyObject *window_repr(PyObject *self) {
  Window *r = reinterpret_cast<Window *>(self);
  return PyUnicode_FromFormat("<callsite tracking window of thread %llu: %u/%u entries>",
                              (unsigned long long)r->tstate_id, r->count, r->capacity);
}

PyType_Slot window_slots[] = {
    {Py_tp_doc, const_cast<char *>("One thread's window of recent call sites (internal).")},
    {Py_tp_dealloc, reinterpret_cast<void *>(window_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(window_repr)},
    {0, nullptr}};

PyType_Spec window_spec = {"callsite._callsite.tracking.Window", int(sizeof(Window)), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, window_slots};

}  // namespace

bool init_window_type() noexcept {
  if (!window_type) window_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&window_spec));
  return window_type != nullptr;
}

Window *new_window(PyThreadState *tstate, std::uint32_t capacity) noexcept {
  auto *entries = static_cast<OwnedCallSite *>(PyMem_Calloc(capacity, sizeof(OwnedCallSite)));
  if (!entries) {
    PyErr_NoMemory();
    return nullptr;
  }
  Window *r = PyObject_New(Window, window_type);
  if (!r) {
    PyMem_Free(entries);
    return nullptr;
  }
  r->entries = entries;
  r->capacity = capacity;
  r->head = r->count = 0;
  r->tstate = tstate;
  r->tstate_id = PyThreadState_GetID(tstate);
  r->chained_func = nullptr;
  r->chained_obj = nullptr;
  r->in_dict = false;
  r->retired = false;
  r->prev = nullptr;
  r->next = registry;
  if (registry) registry->prev = r;
  registry = r;
  ++registered;
  return r;
}

void clear(Window *r) noexcept {
  if (!r->entries) return;
  r->head = r->count = 0;
  release_all(r->entries, r->capacity);
}

std::size_t copy_recent(const Window *r, std::size_t skip, OwnedCallSite *out, std::size_t cap) noexcept {
  std::size_t n = 0;
  for (std::size_t i = skip; i < r->count && n < cap; ++i, ++n) {
    const std::size_t slot = (std::size_t(r->head) + r->capacity - 1 - i) % r->capacity;
    out[n] = r->entries[slot];
    Py_INCREF(out[n].code);
    Py_XINCREF(out[n].callee);
  }
  return n;
}

void release_copies(OwnedCallSite *entries, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    Py_DECREF(entries[i].code);
    Py_XDECREF(entries[i].callee);
  }
}

bool resize(Window *r, std::uint32_t capacity) noexcept {
  if (capacity == r->capacity) return true;
  auto *fresh = static_cast<OwnedCallSite *>(PyMem_Calloc(capacity, sizeof(OwnedCallSite)));
  if (!fresh) {
    PyErr_NoMemory();
    return false;
  }
  // Keep the most recent min(count, capacity) entries in chronological order; the references
  // move with them, the rest are dropped once the window is consistent again.
  const std::uint32_t keep = r->count < capacity ? r->count : capacity;
  for (std::uint32_t k = 0; k < keep; ++k) {
    const std::uint32_t age = keep - 1 - k;  // 0 = most recent
    const std::uint32_t slot = (r->head + r->capacity - 1 - age) % r->capacity;
    fresh[k] = r->entries[slot];
    r->entries[slot] = OwnedCallSite{nullptr, nullptr, 0};
  }
  OwnedCallSite *old = r->entries;
  const std::uint32_t old_capacity = r->capacity;
  r->entries = fresh;
  r->capacity = capacity;
  r->count = keep;
  r->head = keep % capacity;
  release_all(old, old_capacity);
  PyMem_Free(old);
  return true;
}

void retire(Window *r) noexcept {
  if (r->retired) return;
  if (cache_window == r) cache_tstate = nullptr, cache_window = nullptr;
  unlink(r);
  r->retired = true;
}

Window *first_window() noexcept { return registry; }
std::size_t window_count() noexcept { return registered; }

Window *find_window(PyThreadState *tstate) noexcept {
  if (tstate == cache_tstate) return cache_window;
  const std::uint64_t id = PyThreadState_GetID(tstate);
  for (Window *r = registry; r; r = r->next)
    if (r->tstate == tstate && r->tstate_id == id) {
      cache_tstate = tstate;
      cache_window = r;
      return r;
    }
  return nullptr;
}

}  // namespace callsite::tracking::detail
