// native/reify.h — (executable, state) → location, through the executable's reifier, cached.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "callsite/native_frame.h"

namespace callsite::native {

/// Entries per generation of an executable's cache. The cache keeps at most two generations,
/// so it stays bounded for executables whose states never repeat (a JIT's program counters);
/// an entry is released only after this many further distinct states of the same executable
/// were reified, which is what a borrower (FrameInfo, for the operation at hand) relies on.
/// Anything kept across a call into Python (which may reify any number of states) is copied
/// or referenced first.
inline constexpr std::size_t kReifyGeneration = kReifiedStatesKept;  // callsite/frame.h

/// One reified native frame. Strong references; lives while its executable lives and fewer
/// than kReifyGeneration other states of it were reified since it was last looked up, so
/// FrameInfo may borrow from it for the operation at hand.
struct Reified {
  PyObject *filename = nullptr, *name = nullptr, *qualname = nullptr;
  PyObject *code = nullptr;  ///< the reifier's real code object, or nullptr
  int lineno = -1, end_lineno = -1, colno = -1, end_colno = -1;
  bool placeholder = false;  ///< the reifier failed or gave nothing
};

/// The cached location of (executable, state), reifying on first use. A failing reifier
/// gives a placeholder and a ReificationWarning (once per executable). Returns nullptr with
/// a Python error only when that warning was turned into an error, when the reifier raised a
/// BaseException that is not an Exception (propagated, nothing cached), or on out of memory.
/// The reifier runs with the executable held; reify() runs no Python between caching the entry
/// and returning it (what it releases there waits for the next call). The caller holds the
/// executable (its owner) while it uses the entry. GIL held; must be called with no exception
/// set.
const Reified *reify(const Executable *executable, std::uintptr_t state);

/// The name a frame of `executable` shows (a Python executable's own name; a C++ one's
/// decoded as UTF-8 with replacement), and the "<kind:name>" filename of a frame that has no
/// location. New references, or nullptr + error. GIL held.
PyObject *executable_name(const Executable *executable);
PyObject *placeholder_filename(const Executable *executable);

/// Drops the cache of an executable that is being destroyed. GIL held.
void forget(const Executable *executable) noexcept;

/// {"executables", "entries", "hits", "misses", "generation"}: a new dict, or nullptr + error.
PyObject *cache_info() noexcept;

/// A native entry's location through reify(), as symbolize() reports it. False + Python error.
bool symbolize_native(const RawFrame &frame, FrameInfo *out);

/// The warning category of reifier failures (callsite.native.ReificationWarning); created by
/// init_reify(). Borrowed.
extern PyObject *reification_warning;
/// Warns reification_warning: "callsite.native: the <reifier> of <kind> executable '<name>'
/// failed for state <state>: <why>; <shown> (reported once per executable)". The caller
/// reports once per executable, marking it before the call: the warning may run any Python (a
/// showwarning hook), which may reify or read locals again. False with a Python error when the
/// warning was turned into an error. GIL held.
bool warn_reifier_failed(const Executable *executable, const char *reifier, std::uintptr_t state,
                         const std::string &why, const char *shown);
/// Creates the warning category and registers symbolize_native with symbolize(). Once, at init.
bool init_reify();
/// Makes reification_warning a new category deriving from `base` (callsite.CallsiteWarning,
/// which the package registers at import: C++ does not import the package) and RuntimeWarning.
/// False with a Python error.
bool set_reification_warning_base(PyObject *base);

}  // namespace callsite::native
