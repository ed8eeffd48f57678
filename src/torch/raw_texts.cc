// torch/raw_texts.cc — the texts recorded per raw stack (see raw_texts.h).
#include "torch/raw_texts.h"

#include <new>
#include <utility>

namespace callsite::torch {
namespace {

/// Number of references an entry holds: those drop_raw hands over.
std::size_t held_refs(const RawText &e) noexcept {
  return 3 * e.checks.size() + e.files.size() + 1;
}

/// Moves the references `e` holds to `garbage`, which has room for them (held_refs): the
/// table's drop runs where nothing may throw.
void drop_raw(RawText &e, std::vector<PyObject *> &garbage) noexcept {
  for (const RawCheck &c : e.checks) {
    garbage.push_back(c.file);
    garbage.push_back(c.name);
    garbage.push_back(c.linetable);
  }
  for (auto &file : e.files) garbage.push_back(file.first);
  garbage.push_back(e.text);
}

/// Empties `r` (TableLock held), its references moved to `garbage`. Throws std::bad_alloc
/// (the table then unchanged).
void clear_raw(RawTable &r, std::vector<PyObject *> &garbage) {
  std::size_t refs = 0;
  r.entries.for_each([&](const detail::StoredStack &, const RawText &e) { refs += held_refs(e); });
  garbage.reserve(garbage.size() + refs);
  r.entries.clear([&](RawText &e) { drop_raw(e, garbage); });
  r.bytes = 0;
}

}  // namespace

void release_raw(RawTable &r) noexcept {
  std::vector<PyObject *> garbage;
  try {
    TableLock lock;
    clear_raw(r, garbage);
  } catch (const std::bad_alloc &) {
  }
  for (PyObject *o : garbage) Py_DECREF(o);  // strs, bytes, texts: no finalizer runs
}

namespace {

/// Whether the code objects of f[0..n) (the stack `e` was stored for) still describe the
/// frames they described then.
bool checks_match(const RawText &e, const RawFrame *f) noexcept {
  for (std::size_t i = 0; i < e.checks.size(); ++i) {
    auto *code = static_cast<PyCodeObject *>(f[i].code());
    const RawCheck &c = e.checks[i];
    if (code->co_filename != c.file || code->co_name != c.name ||
        code->co_linetable != c.linetable || code->co_firstlineno != c.firstlineno)
      return false;
  }
  return true;
}

/// The `accept` of the entry recorded for f[0..n) in this mode (the table compared the frames'
/// bits already).
auto same_stack(bool forward_only, const RawFrame *f) noexcept {
  return [forward_only, f](const RawText &e) {
    return e.forward_only == forward_only && checks_match(e, f);
  };
}

}  // namespace

PyObject *raw_lookup(RawTable &r, std::uint64_t h, const RawFrame *f, std::size_t n,
                     bool forward_only, FileVersions &files) {
  TableLock lock;
  const RawText *e = r.entries.find(h, f, n, same_stack(forward_only, f));
  if (!e) return nullptr;
  files.reserve(e->files.size());
  for (auto &file : e->files) files.emplace_back(Py_NewRef(file.first), file.second);
  return Py_NewRef(e->text);
}

void raw_store(RawTable &r, std::uint64_t h, const RawFrame *f, std::size_t n, bool forward_only,
               PyObject *text, FileVersions &files) noexcept {
  std::vector<PyObject *> garbage;
  try {
    RawText entry{{}, forward_only, text, files, 0};
    entry.bytes =
        kRawFrameBytes * (n + 1) + (text == Py_None ? 0 : std::size_t(PyUnicode_GET_LENGTH(text)));
    entry.checks.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      auto *code = static_cast<PyCodeObject *>(f[i].code());
      entry.checks.push_back(
          RawCheck{code->co_filename, code->co_name, code->co_linetable, code->co_firstlineno});
      // Shared line tables are counted once per frame: an estimate on the safe side.
      if (PyBytes_Check(code->co_linetable))
        entry.bytes += std::size_t(PyBytes_GET_SIZE(code->co_linetable));
    }
    const std::size_t bytes = entry.bytes;
    TableLock lock;
    const auto same = same_stack(forward_only, f);
    if (const RawText *older = r.entries.find(h, f, n, same)) {  // made from older copies
      garbage.reserve(held_refs(*older));
      r.entries.erase(h, f, n, same, [&](RawText &e) {
        drop_raw(e, garbage);
        r.bytes -= e.bytes;
      });
    }
    if (r.bytes + bytes > kRawBytes) clear_raw(r, garbage);
    if (r.entries.insert(h, f, n, std::move(entry))) {
      // The references of the stored entry: the same objects `f`'s code objects and `files`
      // name.
      Py_INCREF(text);
      for (std::size_t i = 0; i < n; ++i) {
        auto *code = static_cast<PyCodeObject *>(f[i].code());
        Py_INCREF(code->co_filename);
        Py_INCREF(code->co_name);
        Py_INCREF(code->co_linetable);
      }
      for (auto &file : files) Py_INCREF(file.first);
      r.bytes += bytes;
    }
  } catch (const std::bad_alloc &) {  // not stored: made again next time
  }
  release_versions(files);
  for (PyObject *o : garbage) Py_DECREF(o);
}

}  // namespace callsite::torch
