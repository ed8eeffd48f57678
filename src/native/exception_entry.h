// native/exception_entry.h — native frames in Python exception tracebacks.
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::native {

/// api->add_traceback: prepends an entry for (executable, state) to the traceback of the
/// exception being raised — what PyTraceBack_Here does for a Python frame — so the entry
/// lands between the Python frame that called the native code (added next, as the error
/// propagates into it) and the frames the native code called. Any failure while reifying is
/// reported as unraisable; the original exception always survives. -1 if none is set.
int add_traceback(const Executable *executable, std::uintptr_t state);

/// For `with` blocks: the exception `value` (whose traceback `tb` already starts at the
/// frame running the block) gets an entry for (executable, state) right after the entry of
/// the Python frame whose marker is `marker` (at the head when there is none). `tb` nullptr:
/// an exception not raised yet, whose traceback becomes the entry. GIL held, no exception
/// set; never raises.
void insert_traceback(PyObject *value, PyObject *tb, const void *marker,
                      const Executable *executable, std::uintptr_t state);

}  // namespace callsite::native
