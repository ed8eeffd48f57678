// mlir/settings.h — auto_locations settings, scoped per thread/task through a ContextVar.
#pragma once
#include <Python.h>

#include <cstddef>

namespace callsite::mlir {

/// One auto_locations scope: immutable. `limit` SIZE_MAX = the filter's own limit.
struct SettingsObject {
  PyObject_HEAD
  PyObject *filter;    ///< a callsite.Filter (strong)
  std::size_t limit;
  bool use_traceback;  ///< on_explicit: replace an explicit loc= by the traceback
  bool nameloc_wrap;   ///< current_loc: wrap in the NameLoc names of Location.current
  bool window;         ///< source="window": the tracked call window instead of a stack walk
};

extern PyTypeObject *settings_type;

/// The ContextVar holding the active SettingsObject (unset: auto_locations is off).
extern PyObject *settings_var;

/// The settings in effect for the calling thread/task: 1 and a new reference in *out, 0 and
/// nullptr when none, -1 on error.
int current_settings(SettingsObject **out) noexcept;

/// Creates the type and its ContextVar; once at module init (python/init.cc).
bool init_settings() noexcept;

}  // namespace callsite::mlir
