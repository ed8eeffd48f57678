// tracking/query.cc — the window read as a Traceback (capture(source="window")) and as
// CallSites (the C++ API).
#include "tracking/query.h"

#include "capture/traceback_storage.h"
#include "core/compat.h"
#include "core/frame_refs.h"
#include "filter/filter.h"
#include "tracking/modes.h"
#include "tracking/tracking.h"

namespace callsite::tracking::detail {

Window *window_for_query(const char *what) noexcept {
  if (active_mode == Mode::off) {
    PyErr_Format(PyExc_RuntimeError,
                 "%s needs call tracking, which is off: call callsite.tracking.enable() first", what);
    return nullptr;
  }
  if (active_mode == Mode::monitoring && !monitoring::check_owned()) return nullptr;
  PyThreadState *ts = compat::current_tstate();
  Window *r = active_mode == Mode::profile ? profile::window_of(ts) : monitoring::window_of(ts);
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

namespace {

PyObject *as_traceback(const OwnedCallSite *entries, std::size_t n, std::size_t limit, PyObject *filter) {
  RawFrame small[64];
  std::vector<RawFrame> big;
  RawFrame *frames = small;
  if (n > 64) {
    big.resize(n);
    frames = big.data();
  }
  for (std::size_t i = 0; i < n; ++i)
    frames[i] = callsite::detail::python_raw_frame(entries[i].code, entries[i].offset);
  if (filter) return filtered_traceback(filter, frames, n, limit);
  return new_traceback(frames, n < limit ? n : limit);
}

}  // namespace
}  // namespace callsite::tracking::detail

namespace callsite::tracking {

using namespace detail;

PyObject *window_traceback(std::size_t skip, std::size_t limit, PyObject *filter) {
  if (filter == Py_None) filter = nullptr;
  Window *r = window_for_query("capture(source='window')");
  if (!r) return nullptr;
  return with_copy(r, skip, filter ? SIZE_MAX : limit, [&](const OwnedCallSite *e, std::size_t n) {
    return as_traceback(e, n, limit, filter);
  });
}

std::ptrdiff_t window(CallSite *out, std::size_t capacity, std::size_t skip) noexcept {
  Window *r = window_for_query("callsite::tracking::window()");
  if (!r) return -1;
  std::size_t n = 0;
  for (std::size_t i = skip; i < r->count && n < capacity; ++i, ++n) {
    const OwnedCallSite &e = r->entries[(std::size_t(r->head) + r->capacity - 1 - i) % r->capacity];
    out[n] = CallSite{callsite::detail::python_raw_frame(e.code, e.offset), e.callee};
  }
  return std::ptrdiff_t(n);
}

}  // namespace callsite::tracking
