// tracking/state.cc — enable/disable/reconfigure: the one place that switches modes.
#include "tracking/state.h"

#include "tracking/modes.h"

namespace callsite::tracking::detail {

Mode active_mode = Mode::off;
std::uint32_t window_size = 8;
PyObject *record_filter = nullptr;
std::uint64_t callbacks = 0, recorded = 0, disabled = 0, filter_errors = 0;

const char *mode_name(Mode mode) noexcept {
  switch (mode) {
    case Mode::profile: return "profile";
    case Mode::monitoring: return "monitoring";
    default: return "off";
  }
}

Status status() noexcept {
  PyThreadState *ts = compat::current_tstate();
  bool covered = false;
  if (active_mode == Mode::profile)
    covered = profile::installed_on(ts) || find_window(ts) != nullptr;
  else if (active_mode == Mode::monitoring)
    covered = true;  // sys.monitoring events reach every thread
  return Status{active_mode, window_size, record_filter, monitoring::tool_id(),
                window_count(), callbacks, recorded, disabled, filter_errors, covered};
}

namespace {

bool validate(const Settings &s) {
  if (s.mode != Mode::profile && s.mode != Mode::monitoring) {
    PyErr_SetString(PyExc_ValueError, "mode must be 'monitoring', 'profile' or 'auto'");
    return false;
  }
  const char *why = nullptr;
  if (!available(s.mode, &why)) {
    PyErr_Format(PyExc_RuntimeError, "callsite.tracking mode '%s' is unavailable: %s",
                 mode_name(s.mode), why);
    return false;
  }
  if (s.window < 1 || s.window > kMaxWindow) {
    PyErr_Format(PyExc_ValueError, "window must be between 1 and %zu, got %zu", kMaxWindow,
                 s.window);
    return false;
  }
  if (s.tool_id != -1 && (s.mode != Mode::monitoring || s.tool_id < 0 || s.tool_id > 5)) {
    PyErr_Format(PyExc_ValueError,
                 s.mode == Mode::monitoring
                     ? "tool_id must be a sys.monitoring tool id (0-5), got %d"
                     : "tool_id applies to mode='monitoring' only (got %d for mode='profile')",
                 s.tool_id);
    return false;
  }
  // A filter must answer now, not fail on every later event.
  if (s.filter && filter_limit(s.filter) == SIZE_MAX && PyErr_Occurred()) return false;
  return true;
}

bool resize_all(std::uint32_t capacity) {
  bool failed = false;
  for_each_window([&](Window *r) {
    if (!failed && !resize(r, capacity)) failed = true;
    return true;
  });
  return !failed;
}

}  // namespace
}  // namespace callsite::tracking::detail

namespace callsite::tracking {

using namespace detail;

bool available(Mode mode, const char **why_not) noexcept {
  if (mode == Mode::profile) return profile::available(why_not);
  if (mode == Mode::monitoring) return monitoring::available(why_not);
  if (why_not) *why_not = "not a tracking mode";
  return false;
}

Mode auto_mode() noexcept {
  // On 3.12+ the profile hook is itself built on sys.monitoring, instruments the whole
  // interpreter and materialises a frame object per event: monitoring is the cheap one.
  return monitoring::available(nullptr) ? Mode::monitoring : Mode::profile;
}

bool enable(const Settings &s) {
  if (!validate(s)) return false;
  bool same_mode = active_mode == s.mode &&
                   (s.mode != Mode::monitoring || s.tool_id == -1 ||
                    s.tool_id == monitoring::tool_id());
  // A sys.monitoring id another tool freed, or whose CALL callback or events another tool
  // replaced, records nothing: enabling again claims an id anew, as the queries' errors say.
  if (same_mode && s.mode == Mode::monitoring && !monitoring::check_owned()) {
    PyErr_Clear();
    same_mode = false;
  }
  if (active_mode != Mode::off && !same_mode && !disable()) return false;

  const bool filter_changed = record_filter != s.filter;
  Py_XINCREF(s.filter);
  Py_XSETREF(record_filter, s.filter);
  window_size = std::uint32_t(s.window);
  if (!resize_all(window_size)) return false;

  if (same_mode) {
    // Profile mode: enabling again also covers threads started since outside `threading`
    // (install() skips the threads that already run our function).
    if (s.mode == Mode::profile) return profile::start();
    // Sites switched off under the previous filter may be kept by the new one.
    if (filter_changed && disabled) return monitoring::restart();
    return true;
  }
  active_mode = s.mode;  // before installing: the first events already record
  const bool ok = s.mode == Mode::profile ? profile::start() : monitoring::start(s.tool_id);
  if (!ok) {
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    disable();  // remove whatever part was installed
    PyErr_Restore(type, value, tb);
  }
  return ok;
}

bool disable() {
  const Mode was = active_mode;
  active_mode = Mode::off;  // first: a callback still running from here on only forwards
  bool ok = true;
  if (was == Mode::profile) ok = profile::stop();
  if (was == Mode::monitoring) ok = monitoring::stop();
  for_each_window([](Window *r) {
    detail::clear(r);
    return true;
  });
  Py_CLEAR(record_filter);
  return ok;
}

Settings settings() noexcept {
  return Settings{active_mode, window_size, record_filter, monitoring::tool_id()};
}

bool refresh() {
  return active_mode != Mode::monitoring || monitoring::restart();
}

void clear() noexcept {
  if (Window *r = find_window(compat::current_tstate())) detail::clear(r);
}

}  // namespace callsite::tracking

namespace callsite::tracking::detail {

bool init() noexcept { return init_window_type(); }

}  // namespace callsite::tracking::detail
