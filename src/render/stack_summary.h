// render/stack_summary.h — frames as traceback.StackSummary and as the lines its format()
// writes: the one formatter of callsite's texts (Traceback.format, torch's node stack traces).
#pragma once
#include <Python.h>

#include <cstddef>

#include "callsite/frame.h"

namespace callsite::detail {

/// A traceback.StackSummary of `frames[0..n)` (innermost first), outermost first, of
/// FrameSummary objects whose fields equal what traceback.extract_stack reports, columns from
/// co_positions(); lines looked up lazily. New reference or nullptr with an error.
PyObject *stack_summary(const RawFrame *frames, std::size_t n);

/// `traceback.format_list`-style lines (outermost first).
PyObject *format_stack(const RawFrame *frames, std::size_t n);

/// A frame as torch's walk describes it, traceback.FrameSummary(file, line, name,
/// lookup_line=False) without columns: strs borrowed from whoever holds them, `line` -1 for
/// none.
struct NamedFrame {
  PyObject *file;
  PyObject *name;
  int line;
};

/// A traceback.StackSummary of FrameSummary(file, line, name, lookup_line=False) for
/// `frames[0..n)`, in that order. New reference or nullptr with an error.
PyObject *named_summary(const NamedFrame *frames, std::size_t n);

/// "".join(named_summary(frames, n).format()): CPython's own formatting, which reads the
/// lines through linecache (and may so run any code). New reference or nullptr with an error.
PyObject *format_named(const NamedFrame *frames, std::size_t n);

/// The lines format_named writes for the one frame `f`, written here for the common case:
/// `entry` is linecache.cache[f.file] (linecache's tuple: size, mtime, lines, fullname) and
/// the frame's line is one StackSummary.format writes as it stands. Otherwise nullptr with
/// `*unusual` set and no error (the caller asks format_named), or nullptr with an error. Runs
/// no Python code.
PyObject *named_frame_lines(const NamedFrame &f, PyObject *entry, bool *unusual) noexcept;

/// Whether StackSummary.format would cut `frames[0..n)` short ("[Previous line repeated N
/// more times]"): a frame equal, as it compares them (by value), to the three before it.
bool repeats_cut_short(const NamedFrame *frames, std::size_t n) noexcept;

}  // namespace callsite::detail
