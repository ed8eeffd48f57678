// native/guest_module.h — the namespace a native frame runs in: the globals of its guest
// file, never those of the Python module that pushed it. Tools read a frame's source through
// f_globals (linecache.lazycache asks f_globals["__loader__"] for the source of the frame's
// file, sentry_sdk reads __name__ and __loader__): with the pusher's globals they would show
// the pusher's lines under the guest's file name.
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::native {

/// co_firstlineno of the code objects of native frames (the synthetic code of visible frames,
/// the empty code of traceback entries): past the end of any file, so that
/// inspect.findsource() raises OSError ("lineno is out of bounds", 3.10-3.15) for a guest
/// frame. inspect's idea of a code object's source is the Python block that starts at
/// co_firstlineno (getblock() tokenizes it as Python): for a guest function it has no true
/// answer, and a block not holding the frame's line breaks tools that trust it. Lines come
/// from the line tables, which are relative to it (their deltas fit 32 bits).
inline constexpr int kGuestFirstLine = 1 << 30;

/// A function object standing for the guest file `filename` (a str), a new reference: its
/// __globals__ is the guest module's namespace — __name__ and __file__ the file name,
/// __builtins__, __loader__ an object whose get_source(__name__) returns `source` (a str: the
/// file's text held in memory) and __spec__ a ModuleSpec with that loader, or without a text
/// __loader__ None and no __spec__. Visible frames
/// run with it as their function (kept alive by a frame object that outlives the frame) and
/// its globals and builtins. One per (filename, source), shared by every executable and
/// entry of that file; made on a cold path (building an executable's code, an exception
/// entry), when a text is registered with linecache.lazycache. nullptr + error. GIL held; may
/// run any code (linecache).
PyObject *guest_function(PyObject *filename, PyObject *source);

/// The guest function for a location of `executable` in `filename`: with the text that
/// Executable(source=...) gave when `filename` is the executable's file (the first file one
/// of its locations named, or its visible code's file), else without. New reference or
/// nullptr + error. GIL held.
PyObject *guest_function_of(const Executable *executable, PyObject *filename);

/// Drops a reference to a guest function; the shared entry goes when nothing else holds it.
/// GIL held.
void release_guest_function(PyObject *function) noexcept;

/// An executable with a text is being destroyed: the shared namespace of its file and text
/// goes when nothing else uses it (frames keep the globals they run with). GIL held.
void release_guest_source(const Executable *executable) noexcept;

/// linecache.lazycache(filename, the guest globals) when `executable` holds the text of
/// `filename` (again: linecache.clearcache() may have dropped the entry); nothing otherwise.
/// False + error only when linecache itself raised. May run any code. GIL held.
bool prime_linecache(const Executable *executable, PyObject *filename);

/// A code object without positions (every instruction "no location", 3.11+), named `name`, in
/// `filename`, co_firstlineno kGuestFirstLine, cached per (filename, name) for the process.
/// New reference or nullptr + error. GIL held.
PyObject *empty_code(PyObject *filename, PyObject *name);

}  // namespace callsite::native
