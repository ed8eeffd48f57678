// native/guest_module.h — the namespace a native frame runs in: the globals of its guest
// file, never those of the Python module that pushed it. Tools read a frame's source through
// f_globals (linecache.lazycache asks f_globals["__loader__"] for the source of the frame's
// file, sentry_sdk reads __name__ and __loader__): with the pusher's globals they would show
// the pusher's lines under the guest's file name.
#pragma once
#include <Python.h>

#include "callsite/native_frame.h"

namespace callsite::native {

/// co_firstlineno of a code object of a native frame that inspect must not read as Python:
/// past the end of any file, so that inspect.findsource() raises OSError ("lineno is out of
/// bounds", 3.10-3.15), which tools handle as "no source". inspect's idea of a code object's
/// source is the Python block that starts at co_firstlineno (getblock() tokenizes it as
/// Python); a guest function has none, and a block not holding the frame's line breaks tools
/// that trust it. Lines come from the line tables, which are relative to co_firstlineno
/// (their deltas fit 32 bits).
inline constexpr int kGuestFirstLine = 1 << 30;

/// co_firstlineno for the code of a frame that never runs again (a traceback entry, a visible
/// frame kept past its pop) at `line` of `filename`, whose guest namespace is `globals`: the
/// line itself where inspect's block for a code starting there starts with that line — 3.13+
/// (compat::kInspectBlockAtFirstLine) and inspect.getblock() of the file's lines from there
/// (linecache, as inspect reads them) returns without raising. It finds no def/class in a
/// guest line and keeps that line (3.13) or its logical line (3.14+), but raises tokenize's
/// error where the guest text does not tokenize as Python (a lone quote after the line on
/// 3.13, a bracket never closed), which tools do not expect. On 3.13 a file with more than
/// 2000 lines from `line` to its end is not tokenized (the cost of a raise). Else
/// kGuestFirstLine (before 3.13 inspect walks back from the line to line 1 of a guest file, a
/// block without the frame's line). Each answer is kept per (filename, line) in a bounded
/// cache (the first read decides; a file changed later keeps it). -1 + error only for an
/// interrupt (not an Exception) raised meanwhile. GIL held; may run any code (linecache,
/// tokenize).
int guest_first_line(PyObject *filename, PyObject *globals, int line);

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
/// `filename`, co_firstlineno `first_line` (guest_first_line), cached per
/// (filename, name, first line) in a bounded cache. New reference or nullptr + error. GIL held.
PyObject *empty_code(PyObject *filename, PyObject *name, int first_line);

}  // namespace callsite::native
