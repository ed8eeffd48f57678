// torch/text_tables.h — the process-wide tables behind callsite.torch's node stack traces:
// linecache's copies of source files (a version per copy), each frame's formatted lines and
// each kept stack's text. Keys and values are strings and linecache's own entries, never code
// objects, so they outlive every tracer and graph without keeping a module alive.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>
#ifdef Py_GIL_DISABLED
#include <mutex>
#endif

#include "render/stack_summary.h"

namespace callsite::torch {

/// Held around every read and write of the tables (theirs and the filter decisions of
/// torch/texts_type.cc), never across a call into Python nor a release of a reference (which
/// may run a finalizer). With a GIL the GIL is that lock: nothing between those calls lets
/// another thread in. The free-threaded build has no such guarantee: a mutex.
class TableLock {
 public:
#ifdef Py_GIL_DISABLED
  TableLock() : guard_(mutex()) {}

 private:
  static std::mutex &mutex() noexcept {
    static std::mutex m;
    return m;
  }
  std::lock_guard<std::mutex> guard_;
#else
  TableLock() {}  // user-provided: a scope marker the compiler does not call unused
#endif
};

/// One frame as torch's walk describes it (render/stack_summary.h): here exact strs, borrowed
/// (from a code object the caller's Traceback holds, or held by the table that stores the
/// key), and a line.
using FrameKey = detail::NamedFrame;

/// (file, version of linecache's copy of it) for each distinct file of a text.
using FileVersions = std::vector<std::pair<PyObject *, std::uint64_t>>;

/// The text torch's StackSummary.format(...).strip() gives `kept` (outermost first, n > 0),
/// from the tables when linecache still holds the copies of its files the text was made from,
/// else written by render/stack_summary.h. `cache` is linecache.cache (held by the caller). A
/// new reference, or nullptr with a Python error set. Calls into Python only on a miss; every
/// table is looked up again after such a call.
/// With `versions`, also the (file, version) pairs the text was made from (files held; the
/// caller releases them with release_versions), to check it again with copies_unchanged.
PyObject *stack_text(PyObject *cache, const FrameKey *kept, std::size_t n,
                     FileVersions *versions = nullptr);

/// torch's text of frames[0..n) written by CPython alone, without the tables:
/// "".join(StackSummary.format()).strip() (render/stack_summary.h's format_named), for a run
/// the tables leave to CPython and for the Python path. May run any code (linecache's
/// readers). A new reference or nullptr with an error.
PyObject *cpython_text(const FrameKey *frames, std::size_t n);

/// Whether linecache still holds the copies `files` were taken from (`*same`); false with a
/// Python error. May call into Python (a file read again).
bool copies_unchanged(PyObject *cache, const FileVersions &files, bool *same) noexcept;

/// Releases the files of `files` and empties it.
void release_versions(FileVersions &files) noexcept;

/// Empties every table (the references are released after the tables are empty).
void clear_text_tables() noexcept;

/// Number of stack texts held.
std::size_t stack_text_count() noexcept;

}  // namespace callsite::torch
