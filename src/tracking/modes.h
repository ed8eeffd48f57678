// tracking/modes.h — the state both modes share, and the interface each mode implements.
#pragma once
#include <Python.h>

#include <cstdint>

#include "core/compat.h"
#include "filter/filter.h"
#include "tracking/window.h"
#include "tracking/tracking.h"

namespace callsite::tracking::detail {

// --- shared state (state.cc); GIL-protected -------------------------------------------------
extern Mode active_mode;
extern std::uint32_t window_size;
extern PyObject *record_filter;  ///< owned; nullptr: record every call site
extern std::uint64_t callbacks;  ///< callback invocations (both modes), for status/tests
extern std::uint64_t recorded;   ///< entries written
extern std::uint64_t disabled;   ///< DISABLE returned since the last restart_events()
extern std::uint64_t filter_errors;

/// Whether the recording filter lets calls made from `code` be recorded. A filter error must
/// not propagate into the user's call (it would fail an unrelated call): it is counted and
/// the site is recorded.
inline bool record_keeps(PyCodeObject *code) noexcept {
  if (!record_filter) return true;
  const int k = filter_keeps(record_filter, code);
  if (k >= 0) return k != 0;
  PyErr_Clear();
  ++filter_errors;
  return true;
}

/// The recording filter's generation (changes with every rule change; 0 without a filter).
inline std::uint64_t record_filter_generation() noexcept {
  return record_filter ? filter_generation(record_filter) : 0;
}

// --- profile mode (profile.cc) ----------------------------------------------------------------
namespace profile {
bool available(const char **why_not) noexcept;
/// Installs the profile function on every thread and the threading hook for later threads.
bool start() noexcept;
/// Restores every thread's previous profile function and the previous threading hook.
bool stop() noexcept;
/// The calling thread's window, or nullptr when the thread is not covered.
Window *window_of(PyThreadState *tstate) noexcept;
/// Whether `tstate` currently runs callsite's profile function.
bool installed_on(PyThreadState *tstate) noexcept;
}  // namespace profile

// --- monitoring mode (monitoring.cc) ----------------------------------------------------------
namespace monitoring {
bool available(const char **why_not) noexcept;
/// Takes a tool id (`tool_id`, or 4 then 3 when -1), registers the CALL callback, turns the
/// events on. False with an error naming the holder when the id is taken.
bool start(int tool_id) noexcept;
bool stop() noexcept;
/// sys.monitoring.restart_events(), resetting the DISABLE count.
bool restart() noexcept;
int tool_id() noexcept;
/// False with RuntimeError when another tool freed (and maybe took) callsite's tool id.
bool check_owned() noexcept;
/// The calling thread's window (created on its first event), or nullptr.
Window *window_of(PyThreadState *tstate) noexcept;
/// Drops every window from its thread-state dict.
void drop_windows() noexcept;
}  // namespace monitoring

}  // namespace callsite::tracking::detail
