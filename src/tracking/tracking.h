// tracking/tracking.h — tracked call windows: a per-thread window of the last N call sites.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "callsite/frame.h"

namespace callsite::tracking {

/// How call events reach the window.
enum class Mode : std::uint8_t {
  off = 0,
  profile = 1,     ///< the C-level profile function (PyEval_SetProfile), every CPython
  monitoring = 2,  ///< sys.monitoring CALL events with a C callback (3.12+)
};

/// What enable() installs. `filter` (a callsite.Filter or nullptr) is a recording filter: call
/// sites in code it drops are never recorded, and in monitoring mode are switched off with
/// sys.monitoring.DISABLE. `tool_id` -1 picks a free non-conventional id (4, then 3).
struct Settings {
  Mode mode = Mode::off;
  std::size_t window = 8;  ///< entries per thread, 1..kMaxWindow
  PyObject *filter = nullptr;
  int tool_id = -1;
};

inline constexpr std::size_t kMaxWindow = 65536;

/// One recorded call: the caller's frame as a RawFrame (code object + offset in bytes of the
/// call instruction) and the callee's code object when the callee is a Python function
/// (nullptr for C callables). Borrowed from the window; see window().
struct CallSite {
  RawFrame site;
  PyCodeObject *callee;
};

/// Whether `mode` can run in this interpreter; false with a static reason otherwise. The
/// "auto" choice is monitoring where available, else profile.
bool available(Mode mode, const char **why_not = nullptr) noexcept;
Mode auto_mode() noexcept;

/// Installs (or reconfigures) tracking. Re-enabling with another mode switches modes;
/// windows survive a reconfiguration in the same mode. GIL held; false with a Python error.
bool enable(const Settings &settings) noexcept;

/// Removes every hook (no callback runs afterwards) and releases every window's code
/// objects. GIL held; false with a Python error (the hooks are still removed where possible).
bool disable() noexcept;

/// The settings in force (mode off when disabled). `filter` is borrowed.
Settings settings() noexcept;

/// Re-enables the call sites switched off by DISABLE (sys.monitoring.restart_events): needed
/// after the recording filter's rules change. A no-op in profile mode. False + Python error.
bool refresh() noexcept;

/// Copies the calling thread's window, most recent first, after dropping `skip` entries, into
/// `out` (at most `capacity`). Returns the number copied, or -1 with a Python error when
/// tracking is off or does not cover this thread. The entries are borrowed: valid until the
/// next Python call on this thread may overwrite them (take references to keep them).
std::ptrdiff_t window(CallSite *out, std::size_t capacity, std::size_t skip = 0) noexcept;

/// Clears the calling thread's window (releasing its code objects). GIL held.
void clear() noexcept;

/// capture(source="window"): the calling thread's window of recent call sites as a
/// Traceback, most recent first, after `skip`, at most `limit` entries, through `filter`
/// (nullptr or None: unfiltered). Raises RuntimeError when tracking is disabled.
PyObject *window_traceback(std::size_t skip, std::size_t limit, PyObject *filter) noexcept;

}  // namespace callsite::tracking
