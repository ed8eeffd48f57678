// torch/text_tables.cc — linecache's copies (versions), each frame's lines and each kept
// stack's text, process-wide. Every entry holds strong references to the strs of its key, so
// a key compares by identity (no __eq__ runs) and no address is reused while it is held.
#include "torch/text_tables.h"

#include <unordered_map>
#include <utility>
#include <vector>

#include "symbolize/source_lines.h"

namespace callsite::torch {
namespace {

constexpr std::uint64_t kPrime = 0x100000001b3ull;

// Estimated bytes beside a text's characters: the frame's key (three references, the entry).
constexpr std::size_t kFrameKeyBytes = 100;
constexpr std::size_t kStackTextsBytes = std::size_t(1) << 24;
constexpr std::size_t kFrameTextsBytes = std::size_t(1) << 22;
// A file's copy is held while its entry is: bounded, since an entry held here after linecache
// let go of it keeps the file's lines in memory.
constexpr std::size_t kFilesBytes = std::size_t(1) << 23;
// Estimated bytes per line of a linecache entry beyond its characters (the str and the list).
constexpr std::size_t kLineBytes = 64;

std::uint64_t mix(std::uint64_t h, std::uint64_t v) noexcept { return (h ^ v) * kPrime; }

std::uint64_t hash_frame(const FrameKey &f) noexcept {
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = mix(h, std::uintptr_t(f.file) >> 4);
  h = mix(h, std::uintptr_t(f.name) >> 4);
  return mix(h, std::uint64_t(std::uint32_t(f.line)));
}

std::uint64_t hash_frames(const FrameKey *f, std::size_t n) noexcept {
  std::uint64_t h = 0x9E3779B97F4A7C15ull ^ n;
  for (std::size_t i = 0; i < n; ++i) h = mix(h, hash_frame(f[i]));
  return h;
}

bool same_frame(const FrameKey &a, const FrameKey &b) noexcept {
  return a.file == b.file && a.name == b.name && a.line == b.line;
}

// References released once no table refers to them: a release may run a finalizer (of an
// entry's object), which may call back into these tables.
using Garbage = std::vector<PyObject *>;

void release(Garbage &garbage) noexcept {
  for (PyObject *o : garbage) Py_XDECREF(o);
  garbage.clear();
}

struct FileCopy {
  PyObject *entry;  // linecache.cache[file] when the version was taken (or None), held
  std::uint64_t version;
  std::size_t bytes;
};

struct FrameEntry {
  PyObject *file, *name;  // the key's strs, held
  int line;
  PyObject *text;
  std::uint64_t version;  // of the file's copy the text was read from
};

struct StackEntry {
  std::vector<FrameKey> frames;  // the key: each str held
  PyObject *text;
  // (file, version) of each distinct file of the frames, files held.
  std::vector<std::pair<PyObject *, std::uint64_t>> files;
};

struct Tables {
  std::unordered_map<PyObject *, FileCopy> files;  // file (held) -> its copy
  std::size_t files_bytes = 0;
  std::uint64_t next_version = 0;
  std::unordered_multimap<std::uint64_t, FrameEntry> frames;
  std::size_t frames_bytes = 0;
  std::unordered_multimap<std::uint64_t, StackEntry> stacks;
  std::size_t stacks_bytes = 0;
};

Tables &tables() noexcept {
  static Tables *t = new Tables();  // never destroyed: it holds Python objects
  return *t;
}

void drop_file(std::pair<PyObject *const, FileCopy> &item, Garbage &garbage) {
  garbage.push_back(item.first);
  garbage.push_back(item.second.entry);
}

void drop_frame(FrameEntry &e, Garbage &garbage) {
  garbage.push_back(e.file);
  garbage.push_back(e.name);
  garbage.push_back(e.text);
}

void drop_stack(StackEntry &e, Garbage &garbage) {
  for (const FrameKey &f : e.frames) {
    garbage.push_back(f.file);
    garbage.push_back(f.name);
  }
  for (auto &file : e.files) garbage.push_back(file.first);
  garbage.push_back(e.text);
}

void clear_files(Tables &t, Garbage &garbage) {
  for (auto &item : t.files) drop_file(item, garbage);
  t.files.clear();
  t.files_bytes = 0;
}

void clear_frames(Tables &t, Garbage &garbage) {
  for (auto &item : t.frames) drop_frame(item.second, garbage);
  t.frames.clear();
  t.frames_bytes = 0;
}

void clear_stacks(Tables &t, Garbage &garbage) {
  for (auto &item : t.stacks) drop_stack(item.second, garbage);
  t.stacks.clear();
  t.stacks_bytes = 0;
}

/// linecache.cache[file] (a new reference), None when absent; nullptr with an error. A dict's
/// lookup runs no Python code unless a key's __eq__ does; another mapping's may run anything.
PyObject *cached_entry(PyObject *cache, PyObject *file) noexcept {
  if (PyDict_CheckExact(cache)) {
#ifdef Py_GIL_DISABLED
    // Without a GIL a borrowed entry may be freed by another thread before it is held.
    PyObject *entry;
    if (PyDict_GetItemRef(cache, file, &entry) < 0) return nullptr;
    return entry ? entry : Py_NewRef(Py_None);
#else
    PyObject *entry = PyDict_GetItemWithError(cache, file);
    if (!entry && PyErr_Occurred()) return nullptr;
    return Py_NewRef(entry ? entry : Py_None);
#endif
  }
  PyObject *entry = PyObject_GetItem(cache, file);
  if (!entry && PyErr_ExceptionMatches(PyExc_KeyError)) {
    PyErr_Clear();
    return Py_NewRef(Py_None);
  }
  return entry;
}

/// Whether `entry` has linecache's shape, (size, mtime, lines, fullname) with exact builtin
/// types throughout, so that comparing two of them runs no Python code. Its estimated bytes.
bool plain_entry(PyObject *entry, std::size_t *bytes) noexcept {
  if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) != 4) return false;
  PyObject *size = PyTuple_GET_ITEM(entry, 0), *mtime = PyTuple_GET_ITEM(entry, 1),
           *lines = PyTuple_GET_ITEM(entry, 2), *fullname = PyTuple_GET_ITEM(entry, 3);
  if (!PyLong_CheckExact(size) || !PyUnicode_CheckExact(fullname) || !PyList_CheckExact(lines) ||
      !(mtime == Py_None || PyFloat_CheckExact(mtime) || PyLong_CheckExact(mtime)))
    return false;
  const Py_ssize_t n = PyList_GET_SIZE(lines);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!PyUnicode_CheckExact(PyList_GET_ITEM(lines, i))) return false;
  const Py_ssize_t length = PyLong_AsSsize_t(size);
  if (length == -1 && PyErr_Occurred()) PyErr_Clear();
  *bytes = (length > 0 ? std::size_t(length) : 0) + kLineBytes * std::size_t(n);
  return true;
}

/// Whether two of linecache's entries for one file are the same copy: the same object, both
/// absent, or equal plain entries (size, modification time, lines and full name: a file read
/// again with the same lines). Anything else counts as changed.
bool same_copy(PyObject *a, PyObject *b) noexcept {
  if (a == b) return true;
  std::size_t unused;
  if (!plain_entry(a, &unused) || !plain_entry(b, &unused)) return false;
  const int equal = PyObject_RichCompareBool(a, b, Py_EQ);  // builtin types alone
  if (equal < 0) PyErr_Clear();
  return equal == 1;
}

/// The version of linecache's copy of `file` and that copy's entry (a new reference, when
/// `entry` is non-null): by identity when linecache holds the entry the version was taken
/// from. Else the file is read as torch's walk reads it when linecache holds no copy or a
/// lazy one (linecache.getlines, natively where that cannot differ), and a copy equal to the
/// one the version was taken from keeps the version.
bool file_version(PyObject *cache, PyObject *file, std::uint64_t *version,
                  PyObject **entry) {
  Tables &t = tables();
  PyObject *now = cached_entry(cache, file);  // may run anything (not a dict)
  if (!now) return false;
  {
    TableLock lock;
    auto it = t.files.find(file);
    if (it != t.files.end() && it->second.entry == now) {
      *version = it->second.version;
      if (entry)
        *entry = now;
      else
        Py_DECREF(now);
      return true;
    }
  }
  if (now == Py_None || (PyTuple_Check(now) && PyTuple_GET_SIZE(now) == 1)) {
    Py_DECREF(now);
    PyObject *lines = detail::source_lines(file);  // may run anything
    if (!lines) return false;
    Py_DECREF(lines);
    now = cached_entry(cache, file);
    if (!now) return false;
  }
  std::size_t bytes = 0;
  plain_entry(now, &bytes);
  PyObject *known = nullptr;
  std::uint64_t known_version = 0;
  {
    TableLock lock;
    auto it = t.files.find(file);
    if (it != t.files.end()) {
      known = Py_NewRef(it->second.entry);
      known_version = it->second.version;
    }
  }
  const bool same = known && same_copy(known, now);
  Py_XDECREF(known);
  Garbage garbage;
  std::uint64_t v;
  try {
    TableLock lock;
    v = same ? known_version : ++t.next_version;
    auto it = t.files.find(file);
    if (it != t.files.end()) {
      t.files_bytes -= it->second.bytes;
      drop_file(*it, garbage);
      t.files.erase(it);
    }
    if (t.files_bytes + bytes > kFilesBytes) clear_files(t, garbage);
    t.files.emplace(Py_NewRef(file), FileCopy{Py_NewRef(now), v, bytes});
    t.files_bytes += bytes;
  } catch (const std::bad_alloc &) {
    release(garbage);
    Py_DECREF(now);
    PyErr_NoMemory();
    return false;
  }
  *version = v;
  if (entry)
    *entry = now;
  else
    Py_DECREF(now);
  release(garbage);
  return true;
}

/// The frame's lines for the copy of its file at `version` (`entry`), from the table or
/// formatted (then stored). A new reference, or nullptr with an error.
PyObject *frame_text(const FrameKey &f, std::uint64_t version, PyObject *entry) {
  Tables &t = tables();
  const std::uint64_t h = hash_frame(f);
  {
    TableLock lock;
    auto range = t.frames.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      FrameEntry &e = it->second;
      if (e.file == f.file && e.name == f.name && e.line == f.line && e.version == version)
        return Py_NewRef(e.text);
    }
  }
  bool unusual = false;
  PyObject *text = detail::named_frame_lines(f, entry, &unusual);
  if (!text && !unusual) return nullptr;
  if (!text && !(text = detail::format_named(&f, 1))) return nullptr;  // may run anything
  const std::size_t bytes = std::size_t(PyUnicode_GET_LENGTH(text)) + kFrameKeyBytes;
  Garbage garbage;
  try {
    TableLock lock;
    auto range = t.frames.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      FrameEntry &e = it->second;
      if (e.file == f.file && e.name == f.name && e.line == f.line) {  // an older copy's
        t.frames_bytes -= std::size_t(PyUnicode_GET_LENGTH(e.text)) + kFrameKeyBytes;
        drop_frame(e, garbage);
        t.frames.erase(it);
        break;
      }
    }
    if (t.frames_bytes + bytes > kFrameTextsBytes) clear_frames(t, garbage);
    t.frames.emplace(h, FrameEntry{Py_NewRef(f.file), Py_NewRef(f.name), f.line,
                                   Py_NewRef(text), version});
    t.frames_bytes += bytes;
  } catch (const std::bad_alloc &) {
    release(garbage);
    Py_DECREF(text);
    PyErr_NoMemory();
    return nullptr;
  }
  release(garbage);
  return text;
}

/// text.strip() (str.strip: C code), `text` stolen; nullptr (an error set) passes through.
PyObject *stripped(PyObject *text) {
  static PyObject *strip = PyUnicode_InternFromString("strip");
  if (!text || !strip) {
    Py_XDECREF(text);
    return nullptr;
  }
  PyObject *result = PyObject_CallMethodNoArgs(text, strip);
  Py_DECREF(text);
  return result;
}

/// A new text for `kept`: the versions of its files taken first (a copy changed while the
/// text is made is not trusted), then each frame's lines. `files` receives (file, version),
/// files held.
PyObject *make_stack_text(PyObject *cache, const FrameKey *kept, std::size_t n,
                          std::vector<std::pair<PyObject *, std::uint64_t>> &files) {
  std::vector<PyObject *> entries;  // held, one per file
  auto done = [&](PyObject *result) {
    for (PyObject *e : entries) Py_DECREF(e);
    return result;
  };
  try {
    for (std::size_t i = 0; i < n; ++i) {
      bool seen = false;
      for (auto &file : files) seen = seen || file.first == kept[i].file;
      if (seen) continue;
      std::uint64_t version;
      PyObject *entry;
      if (!file_version(cache, kept[i].file, &version, &entry)) return done(nullptr);
      entries.push_back(entry);
      files.emplace_back(Py_NewRef(kept[i].file), version);
    }
    if (detail::repeats_cut_short(kept, n)) return done(cpython_text(kept, n));
    PyObject *parts = PyList_New(Py_ssize_t(n));
    if (!parts) return done(nullptr);
    for (std::size_t i = 0; i < n; ++i) {
      std::size_t k = 0;
      while (files[k].first != kept[i].file) ++k;
      PyObject *text = frame_text(kept[i], files[k].second, entries[k]);
      if (!text) {
        Py_DECREF(parts);
        return done(nullptr);
      }
      PyList_SET_ITEM(parts, Py_ssize_t(i), text);
    }
    static PyObject *empty = PyUnicode_InternFromString("");
    PyObject *joined = empty ? PyUnicode_Join(empty, parts) : nullptr;
    Py_DECREF(parts);
    return done(stripped(joined));
  } catch (const std::bad_alloc &) {
    PyErr_NoMemory();
    return done(nullptr);
  }
}

void release_files(std::vector<std::pair<PyObject *, std::uint64_t>> &files) noexcept {
  for (auto &file : files) Py_DECREF(file.first);
  files.clear();
}

}  // namespace

bool copies_unchanged(PyObject *cache, const FileVersions &files, bool *same) noexcept {
  *same = true;
  for (auto &file : files) {
    std::uint64_t now;
    if (!file_version(cache, file.first, &now, nullptr)) return false;
    if (now != file.second) {
      *same = false;
      return true;
    }
  }
  return true;
}

void release_versions(FileVersions &files) noexcept { release_files(files); }

PyObject *cpython_text(const FrameKey *frames, std::size_t n) {
  return stripped(detail::format_named(frames, n));
}

PyObject *stack_text(PyObject *cache, const FrameKey *kept, std::size_t n,
                     FileVersions *versions) {
  Tables &t = tables();
  const std::uint64_t h = hash_frames(kept, n);
  std::vector<std::pair<PyObject *, std::uint64_t>> files;
  PyObject *text = nullptr;
  try {
    TableLock lock;
    auto range = t.stacks.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {
      StackEntry &e = it->second;
      if (e.frames.size() != n) continue;
      bool same = true;
      for (std::size_t i = 0; same && i < n; ++i) same = same_frame(e.frames[i], kept[i]);
      if (!same) continue;
      // Copies: checking a file may call into Python, which may empty the table.
      files.reserve(e.files.size());
      for (auto &file : e.files) files.emplace_back(Py_NewRef(file.first), file.second);
      text = Py_NewRef(e.text);
      break;
    }
  } catch (const std::bad_alloc &) {
    release_files(files);
    PyErr_NoMemory();
    return nullptr;
  }
  if (text) {
    bool same;
    if (!copies_unchanged(cache, files, &same)) {
      release_files(files);
      Py_DECREF(text);
      return nullptr;
    }
    if (same) {
      if (versions)
        *versions = std::move(files);
      else
        release_files(files);
      return text;
    }
    release_files(files);
    Py_CLEAR(text);
  }
  text = make_stack_text(cache, kept, n, files);
  if (!text) {
    release_files(files);
    return nullptr;
  }
  const std::size_t bytes = std::size_t(PyUnicode_GET_LENGTH(text)) + kFrameKeyBytes * n;
  Garbage garbage;
  try {
    if (versions) {
      versions->reserve(files.size());
      for (auto &file : files) versions->emplace_back(Py_NewRef(file.first), file.second);
    }
    std::vector<FrameKey> key(kept, kept + n);
    TableLock lock;
    auto range = t.stacks.equal_range(h);
    for (auto it = range.first; it != range.second; ++it) {  // a text of older copies
      StackEntry &e = it->second;
      bool same = e.frames.size() == n;
      for (std::size_t i = 0; same && i < n; ++i) same = same_frame(e.frames[i], kept[i]);
      if (!same) continue;
      t.stacks_bytes -= std::size_t(PyUnicode_GET_LENGTH(e.text)) + kFrameKeyBytes * n;
      drop_stack(e, garbage);
      t.stacks.erase(it);
      break;
    }
    if (t.stacks_bytes + bytes > kStackTextsBytes) clear_stacks(t, garbage);
    auto it = t.stacks.emplace(h, StackEntry{std::move(key), text, std::move(files)});
    Py_INCREF(text);
    for (const FrameKey &f : it->second.frames) {
      Py_INCREF(f.file);
      Py_INCREF(f.name);
    }
    t.stacks_bytes += bytes;
  } catch (const std::bad_alloc &) {
    release(garbage);
    release_files(files);
    Py_DECREF(text);
    PyErr_NoMemory();
    return nullptr;
  }
  release(garbage);
  return text;
}

void clear_text_tables() noexcept {
  Garbage garbage;
  try {
    TableLock lock;
    Tables &t = tables();
    clear_stacks(t, garbage);
    clear_frames(t, garbage);
    clear_files(t, garbage);
  } catch (const std::bad_alloc &) {
  }
  release(garbage);
}

std::size_t stack_text_count() noexcept {
  TableLock lock;
  return tables().stacks.size();
}

}  // namespace callsite::torch
