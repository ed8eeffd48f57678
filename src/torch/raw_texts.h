// torch/raw_texts.h — the texts recorded per raw stack: a stack captured before (the same code
// objects at the same offsets, in the same recording mode) gets its text back with one walk,
// one hash and one comparison, nothing symbolized. Entries keep no code object alive: they
// borrow the stack's frames (core/stack_table.h) and check, on every hit, that each code
// object still describes what it described when the text was made.
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "callsite/frame.h"
#include "core/stack_table.h"
#include "torch/text_tables.h"

namespace callsite::torch {

/// What a raw frame (code, offset) described when its entry was made, held: a code object at
/// the same address later (the first one freed) describes the same frame only if it has the
/// same file, name, line table and first line (a frame's line is a function of those and the
/// offset, symbolize/code_info.h).
struct RawCheck {
  PyObject *file, *name, *linetable;
  int firstlineno;
};

/// The text of a stack as captured in one mode (the stack is the table's key, borrowed: its
/// code objects are checked by `checks` instead), with the copies of the files it was made
/// from.
struct RawText {
  std::vector<RawCheck> checks;  // one per frame of the key
  bool forward_only;
  PyObject *text;  // held; None when no frame is kept
  FileVersions files;
  std::size_t bytes;  // estimated: the frames, their line tables, the text
};

/// The stacks recorded under one set of rules, and their estimated bytes.
struct RawTable {
  detail::StackTable<RawText> entries{detail::FrameRefs::borrowed};
  std::size_t bytes = 0;
};

// Estimated bytes of a raw entry's frame (the frame, its checks) beside its line table and text.
constexpr std::size_t kRawFrameBytes = 64;
constexpr std::size_t kRawBytes = std::size_t(1) << 24;

/// Empties `r` (the table stays usable), releasing what its entries hold.
void release_raw(RawTable &r) noexcept;

/// The text recorded for frames[0..n) (hashed `h`) in this mode (a new reference) with its
/// file versions (held, appended to `files`), or nullptr (no error) when there is none.
/// Throws std::bad_alloc (nothing then held).
PyObject *raw_lookup(RawTable &r, std::uint64_t h, const RawFrame *f, std::size_t n,
                     bool forward_only, FileVersions &files);

/// Stores `text` for frames[0..n) (the entry takes its own references; `files` is released).
/// Frames are all Python frames of live code objects (the caller's Traceback holds them).
void raw_store(RawTable &r, std::uint64_t h, const RawFrame *f, std::size_t n, bool forward_only,
               PyObject *text, FileVersions &files) noexcept;

}  // namespace callsite::torch
