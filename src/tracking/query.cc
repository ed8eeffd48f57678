// tracking/query.cc — reading a window: as a callsite.Traceback, as CallSites, through a Filter.
#include <vector>

#include "capture/capture.h"
#include "callsite/traceback.h"
#include "render/frame_object.h"
#include "tracking/hooks.h"
#include "tracking/modes.h"
#include "tracking/state.h"

namespace callsite::tracking::detail {

PyTypeObject *call_site_type = nullptr;

namespace {

PyStructSequence_Field call_site_fields[] = {
    {"code", "the caller's code object"},
    {"offset", "instruction offset (bytes) of the call in the caller, as frame.f_lasti"},
    {"callee", "the callee's code object, or None (C callables, types)"},
    {"site", "the call site as a callsite.Frame (filename, lineno, colno, ...)"},
    {nullptr, nullptr}};

PyStructSequence_Desc call_site_desc = {
    "callsite.tracking.CallSite",
    "One recorded call: where it was made (code, offset, site) and what it called (callee).",
    call_site_fields, 4};

// The calling thread's ring, or nullptr with RuntimeError saying why there is none.
Ring *ring_for_query(const char *what) {
  if (active_mode == Mode::off) {
    PyErr_Format(PyExc_RuntimeError,
                 "%s needs call tracking, which is off: call callsite.tracking.enable() first", what);
    return nullptr;
  }
  PyThreadState *ts = current_tstate();
  Ring *r = active_mode == Mode::profile ? profile::ring_of(ts) : monitoring::ring_of(ts);
  if (!r && !PyErr_Occurred())
    PyErr_Format(PyExc_RuntimeError,
                 active_mode == Mode::profile
                     ? "%s: this thread is not tracked (profile mode covers the threads that "
                       "existed at enable() and those started through threading since; "
                       "another profiler may have replaced callsite's with sys.setprofile)"
                     : "%s: this thread has no window yet",
                 what);
  return r;
}

// Copies the window with references held (a query may run code that makes calls, which
// overwrite entries), hands the copy to `use`, releases it.
// At most `want` entries are copied (a filter may need them all; a plain query `limit`).
template <class Use>
PyObject *with_copy(Ring *r, std::size_t skip, std::size_t want, Use use) {
  Entry small[64];
  std::vector<Entry> big;
  Entry *buf = small;
  const std::size_t cap = want < r->count ? want : r->count;
  if (cap > 64) {
    big.resize(cap);
    buf = big.data();
  }
  const std::size_t n = copy_recent(r, skip, buf, cap);
  PyObject *result = use(buf, n);
  release_copies(buf, n);
  return result;
}

PyObject *as_traceback(const Entry *entries, std::size_t n, std::size_t limit, PyObject *filter) {
  RawFrame small[64];
  std::vector<RawFrame> big;
  RawFrame *frames = small;
  if (n > 64) {
    big.resize(n);
    frames = big.data();
  }
  for (std::size_t i = 0; i < n; ++i)
    frames[i] = RawFrame{reinterpret_cast<std::uintptr_t>(entries[i].code), entries[i].offset};
  if (filter) return filter::filtered_traceback(filter, frames, n, limit);
  return make_traceback(frames, n < limit ? n : limit);
}

PyObject *new_call_site(const Entry &e) {
  PyObject *item = PyStructSequence_New(call_site_type);
  if (!item) return nullptr;
  const RawFrame raw{reinterpret_cast<std::uintptr_t>(e.code), e.offset};
  PyObject *site = callsite::detail::new_frame(raw);
  PyObject *offset = PyLong_FromSsize_t(e.offset);
  if (!site || !offset) {
    Py_XDECREF(site);
    Py_XDECREF(offset);
    Py_DECREF(item);
    return nullptr;
  }
  PyStructSequence_SetItem(item, 0, Py_NewRef(reinterpret_cast<PyObject *>(e.code)));
  PyStructSequence_SetItem(item, 1, offset);
  PyStructSequence_SetItem(item, 2, Py_NewRef(e.callee ? reinterpret_cast<PyObject *>(e.callee)
                                                       : Py_None));
  PyStructSequence_SetItem(item, 3, site);
  return item;
}

PyObject *as_call_sites(const Entry *entries, std::size_t n, std::size_t limit, PyObject *filter) {
  PyObject *list = PyList_New(0);
  if (!list) return nullptr;
  std::size_t kept = 0;
  if (filter) {
    const std::size_t own = filter::filter_limit(filter);
    if (own == SIZE_MAX && PyErr_Occurred()) goto fail;
    if (own < limit) limit = own;
  }
  for (std::size_t i = 0; i < n && kept < limit; ++i) {
    if (filter) {
      const int k = filter::keeps(filter, entries[i].code);
      if (k < 0) goto fail;
      if (!k) continue;
    }
    PyObject *item = new_call_site(entries[i]);
    if (!item || PyList_Append(list, item) < 0) {
      Py_XDECREF(item);
      goto fail;
    }
    Py_DECREF(item);
    ++kept;
  }
  return list;
fail:
  Py_DECREF(list);
  return nullptr;
}

// skip, limit positional-or-keyword; filter keyword-only (as capture()).
constexpr const char *kNames[] = {"skip", "limit", "filter"};

}  // namespace

bool init() noexcept {
  if (!init_ring_type()) return false;
  if (!call_site_type) call_site_type = PyStructSequence_NewType(&call_site_desc);
  return call_site_type != nullptr;
}

PyObject *window_py(PyObject *, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) noexcept {
  PyObject *slots[3] = {nullptr, nullptr, nullptr};
  if (nargs > 2) {
    PyErr_Format(PyExc_TypeError, "window() takes at most 2 positional arguments (%zd given)",
                 nargs);
    return nullptr;
  }
  for (Py_ssize_t i = 0; i < nargs; ++i) slots[i] = args[i];
  for (Py_ssize_t k = 0, nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0; k < nkw; ++k) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, k);
    int slot = -1;
    for (int j = 0; j < 3; ++j)
      if (PyUnicode_CompareWithASCIIString(key, kNames[j]) == 0) slot = j;
    if (slot < 0 || slots[slot]) {
      PyErr_Format(PyExc_TypeError,
                   slot < 0 ? "window() got an unexpected keyword argument '%U'"
                            : "window() got multiple values for argument '%U'",
                   key);
      return nullptr;
    }
    slots[slot] = args[nargs + k];
  }
  size_t skip = 0, limit = SIZE_MAX;
  if (slots[0] && !callsite::detail::parse_count(slots[0], "skip", 0, &skip)) return nullptr;
  if (slots[1] && !callsite::detail::parse_count(slots[1], "limit", SIZE_MAX, &limit)) return nullptr;
  PyObject *filter = slots[2] == Py_None ? nullptr : slots[2];
  Ring *r = ring_for_query("callsite.tracking.window()");
  if (!r) return nullptr;
  return with_copy(r, skip, filter ? SIZE_MAX : limit, [&](const Entry *e, std::size_t n) {
    return as_call_sites(e, n, limit, filter);
  });
}

PyObject *last_py(PyObject *, PyObject *const *args, Py_ssize_t nargs) noexcept {
  if (nargs > 1) {
    PyErr_Format(PyExc_TypeError, "last() takes at most 1 argument (%zd given)", nargs);
    return nullptr;
  }
  PyObject *filter = nargs == 1 && args[0] != Py_None ? args[0] : nullptr;
  Ring *r = ring_for_query("callsite.tracking.last()");
  if (!r) return nullptr;
  for (std::uint32_t i = 0; i < r->count; ++i) {
    const Entry &e = r->entries[(r->head + r->capacity - 1 - i) % r->capacity];
    PyCodeObject *code = e.code;
    if (filter) {
      Py_INCREF(code);  // deciding may allocate, and so run code that records calls
      const int k = filter::keeps(filter, code);
      Py_DECREF(code);
      if (k < 0) return nullptr;
      if (!k) continue;
    }
    return callsite::detail::new_frame(RawFrame{reinterpret_cast<std::uintptr_t>(code), e.offset});
  }
  if (filter && filter::filter_limit(filter) == SIZE_MAX && PyErr_Occurred()) return nullptr;
  Py_RETURN_NONE;
}

}  // namespace callsite::tracking::detail

namespace callsite::tracking {

using namespace detail;

PyObject *window_traceback(std::size_t skip, std::size_t limit, PyObject *filter) noexcept {
  if (filter == Py_None) filter = nullptr;
  Ring *r = ring_for_query("capture(source='window')");
  if (!r) return nullptr;
  return with_copy(r, skip, filter ? SIZE_MAX : limit, [&](const Entry *e, std::size_t n) {
    return as_traceback(e, n, limit, filter);
  });
}

std::ptrdiff_t window(CallSite *out, std::size_t capacity, std::size_t skip) noexcept {
  Ring *r = ring_for_query("callsite::tracking::window()");
  if (!r) return -1;
  std::size_t n = 0;
  for (std::size_t i = skip; i < r->count && n < capacity; ++i, ++n) {
    const Entry &e = r->entries[(std::size_t(r->head) + r->capacity - 1 - i) % r->capacity];
    out[n] = CallSite{RawFrame{reinterpret_cast<std::uintptr_t>(e.code), e.offset}, e.callee};
  }
  return std::ptrdiff_t(n);
}

}  // namespace callsite::tracking
