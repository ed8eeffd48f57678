// tracking/state.h — what the bindings read and call beyond the public API (tracking/tracking.h).
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

#include "tracking/tracking.h"

namespace callsite::tracking::detail {

/// A snapshot for callsite.tracking.status().
struct Status {
  Mode mode;
  std::size_t window;
  PyObject *filter;  ///< borrowed, nullptr when none
  int tool_id;       ///< -1 outside monitoring mode
  std::size_t threads;  ///< live windows
  std::uint64_t callbacks, recorded, disabled, filter_errors;
  bool this_thread_covered;  ///< the calling thread has a window that is being updated
};
Status status() noexcept;

/// Creates the window type; once, at init. False with a Python error.
bool init() noexcept;

/// "off", "profile", "monitoring".
const char *mode_name(Mode mode) noexcept;

}  // namespace callsite::tracking::detail
