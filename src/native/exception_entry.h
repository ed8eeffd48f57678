// native/exception_entry.h — native frames in Python exception tracebacks.
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::native {

/// api->add_traceback: prepends an entry for (executable, state) to the traceback of the
/// exception being raised — what PyTraceBack_Here does for a Python frame — so the entry
/// lands between the Python frame that called the native code (added next, as the error
/// propagates into it) and the frames the native code called. Any failure while reifying is
/// reported as unraisable; the original exception always survives, as the exception raised
/// or as the __context__ of an interrupt (KeyboardInterrupt, SystemExit) that the frame's
/// locals reifier raised, which then propagates instead. The entry's variables are those of
/// the frame `link` (nullptr: see registered_link). -1 if no exception is set.
int add_traceback(const Executable *executable, std::uintptr_t state, const NativeLink *link);
/// The same for the calling thread's innermost frame of `executable` at `state` with a
/// locals reifier of its own, if any (api->add_traceback).
int add_traceback(const Executable *executable, std::uintptr_t state);

/// For `with` blocks: the exception `value` (whose traceback `tb` already starts at the
/// frame running the block) gets an entry for (executable, state) right after the entry of
/// the Python frame whose marker is `marker` (at the head when there is none); its variables
/// are those of the frame `link`. `tb` nullptr: an exception not raised yet, whose traceback
/// becomes the entry. GIL held, no exception set. Returns nullptr, or the interrupt the
/// frame's locals reifier raised (a new reference, `value` its __context__), which the
/// caller must raise instead of `value`.
PyObject *insert_traceback(PyObject *value, PyObject *tb, const void *marker,
                           const Executable *executable, std::uintptr_t state,
                           const NativeLink *link);

}  // namespace callsite::native
