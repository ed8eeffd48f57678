// symbolize/source_lines.cc — linecache.getlines(filename) without its Python path
// (tokenize.open's encoding detection, a TextIOWrapper read line by line) for the common case,
// and linecache itself for every other.
//
// What is reproduced, from Lib/linecache.py and Lib/tokenize.py of 3.10 to 3.15:
// - getlines: a cached entry of any length but 1 gives its item 2, unchecked for staleness.
// - updatecache: fullname is the filename; os.stat(fullname); tokenize.open(fullname)
//   .readlines(); a last line without "\n" gets one; cache[filename] =
//   (st_size, st_mtime, lines, fullname). (UnicodeDecodeError, SyntaxError) give [] and no entry.
// - tokenize.detect_encoding: a UTF-8 BOM gives 'utf-8-sig'; a coding cookie
//   (cookie_re = '^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)', ASCII) in line 1, or in line 2 when
//   line 1 matches blank_re = '^[ \t\f]*(?:[#\r\n]|$)'; _get_normal_name's spelling of UTF-8;
//   lines split on b'\n' as a binary readline does.
// - TextIOWrapper(newline=None).readlines(): "\r\n" and "\r" become "\n", and only "\n" ends a
//   line (not \v, \f, \x1c-\x1e, \x85, \u2028, \u2029, which str.splitlines splits on).
// What differs between versions is left to linecache (the fallback): an empty file ([] up to
// 3.12, ['\n'] from 3.13), NUL bytes in the lines detect_encoding reads (a SyntaxError from
// 3.14), a name os.stat cannot find (3.14 looks into archives on sys.path), `<...>` names.
#include "symbolize/source_lines.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace callsite::detail {
namespace {

// Interned once; the module refuses subinterpreters, so one interpreter owns them.
PyObject *s_linecache, *s_cache, *s_getlines, *s_updatecache, *s_stat, *s_os, *s_st_mtime;

bool init_names() noexcept {
  if (s_st_mtime) return true;
  s_linecache = PyUnicode_InternFromString("linecache");
  s_cache = s_linecache ? PyUnicode_InternFromString("cache") : nullptr;
  s_getlines = s_cache ? PyUnicode_InternFromString("getlines") : nullptr;
  s_updatecache = s_getlines ? PyUnicode_InternFromString("updatecache") : nullptr;
  s_os = s_updatecache ? PyUnicode_InternFromString("os") : nullptr;
  s_stat = s_os ? PyUnicode_InternFromString("stat") : nullptr;
  s_st_mtime = s_stat ? PyUnicode_InternFromString("st_mtime") : nullptr;
  return s_st_mtime != nullptr;
}

// sys.modules[name] (linecache on first use, os for st_mtime), or an import when it is not
// there. A plain dict lookup: PyImport_GetModule also asks the module's __spec__ whether it is
// still initializing, an attribute lookup that fails (an exception made and cleared).
PyObject *import_module(PyObject *name) {
  PyObject *modules = PyImport_GetModuleDict();
  PyObject *module = PyDict_CheckExact(modules)
                         ? Py_XNewRef(PyDict_GetItemWithError(modules, name))
                         : PyImport_GetModule(name);
  if (module || PyErr_Occurred()) return module;
  return PyImport_Import(name);
}

// The linecache module, imported on first use and held for the process, as the traceback
// module holds the one it imported: the functions that call linecache use that module whatever
// sys.modules says later.
PyObject *linecache_module = nullptr;

// linecache.cache: the module's global, read from its dict (a module's attributes are its
// dict's entries), a new reference; nullptr with an exception or with none (missing).
PyObject *linecache_cache(PyObject *linecache) {
  if (!PyModule_CheckExact(linecache)) return PyObject_GetAttr(linecache, s_cache);
  return Py_XNewRef(PyDict_GetItemWithError(PyModule_GetDict(linecache), s_cache));
}

// True when linecache's function `name` is still linecache's own (a function of that module's
// globals), not one put in its place (doctest's, a test's wrapper): only then is what it gives
// known without calling it. No Python code runs in between: the borrowed function is used at once.
bool is_own_function(PyObject *globals, PyObject *name) noexcept {
  PyObject *fn = PyDict_GetItemWithError(globals, name);
  if (!fn) PyErr_Clear();
  return fn && PyFunction_Check(fn) && PyFunction_GET_GLOBALS(fn) == globals;
}

// linecache.getlines(filename) itself, held to the list the contract promises.
PyObject *fallback(PyObject *linecache, PyObject *filename) {
  PyObject *lines = PyObject_CallMethodOneArg(linecache, s_getlines, filename);
  if (lines && !PyList_Check(lines)) {
    PyErr_Format(PyExc_TypeError, "linecache.getlines(%R) returned %.200s, expected a list",
                 filename, Py_TYPE(lines)->tp_name);
    Py_CLEAR(lines);
  }
  return lines;
}

// getlines' `except MemoryError: clearcache(); return []`, for a MemoryError raised while
// reading; any other exception is linecache's to raise.
PyObject *after_error(PyObject *cache) noexcept {
  if (!PyErr_ExceptionMatches(PyExc_MemoryError)) return nullptr;
  PyErr_Clear();
  if (cache && PyDict_CheckExact(cache)) PyDict_Clear(cache);
  return PyList_New(0);
}

// --- tokenize.detect_encoding on bytes ----------------------------------------------------

struct Span {
  const char *p;
  std::size_t n;
};

// What readline() on the binary file gives at `from`: up to and including the next b'\n'.
Span next_line(const char *buf, std::size_t from, std::size_t end) noexcept {
  const void *nl = std::memchr(buf + from, '\n', end - from);
  const std::size_t stop = nl ? std::size_t(static_cast<const char *>(nl) - buf) + 1 : end;
  return {buf + from, stop - from};
}

inline bool is_space_tab_ff(char c) noexcept { return c == ' ' || c == '\t' || c == '\f'; }
inline bool is_name_char(char c) noexcept {  // [-\w.] with re.ASCII
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '_' || c == '-' || c == '.';
}

enum class Cookie { none, utf8, other };

// _get_normal_name(name) == 'utf-8': its first 12 characters, lower-cased, '_' as '-', are
// 'utf-8' or start with 'utf-8-'.
bool names_utf8(const char *name, std::size_t n) noexcept {
  char low[12];
  const std::size_t k = n < 12 ? n : 12;
  for (std::size_t i = 0; i < k; ++i) {
    char c = name[i];
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
    low[i] = c == '_' ? '-' : c;
  }
  return k >= 5 && std::memcmp(low, "utf-8", 5) == 0 && (k == 5 || low[5] == '-');
}

// cookie_re.match(line): '#' after [ \t\f]*, then the first "coding" followed by ':' or '=',
// optional [ \t]*, and at least one name character (the lazy .*? tries each "coding" in turn;
// '.' is anything but '\n', so '\r' inside a line of a CR-only file is crossed too).
Cookie find_cookie(Span line) noexcept {
  const char *p = line.p, *end = line.p + line.n;
  while (p < end && is_space_tab_ff(*p)) ++p;
  if (p == end || *p != '#') return Cookie::none;
  for (++p; end - p >= 7 && *p != '\n'; ++p) {
    if (std::memcmp(p, "coding", 6) != 0 || (p[6] != ':' && p[6] != '=')) continue;
    const char *q = p + 7;
    while (q < end && (*q == ' ' || *q == '\t')) ++q;
    const char *name = q;
    while (q < end && is_name_char(*q)) ++q;
    if (q == name) continue;
    return names_utf8(name, std::size_t(q - name)) ? Cookie::utf8 : Cookie::other;
  }
  return Cookie::none;
}

// blank_re.match(line): [ \t\f]* then '#', '\r', '\n' or the end.
bool is_blank(Span line) noexcept {
  std::size_t i = 0;
  while (i < line.n && is_space_tab_ff(line.p[i])) ++i;
  return i == line.n || line.p[i] == '#' || line.p[i] == '\r' || line.p[i] == '\n';
}

inline bool has_nul(Span line) noexcept { return std::memchr(line.p, '\0', line.n) != nullptr; }

// True when the text from `start` (after any BOM) is UTF-8 by detect_encoding's rules and the
// result cannot differ between versions; false: leave the file to linecache.
bool decodes_as_utf8(const char *buf, std::size_t start, std::size_t end) noexcept {
  if (start == end) return false;  // an empty file: [] or ['\n'] depending on the version
  const Span first = next_line(buf, start, end);
  if (has_nul(first)) return false;
  switch (find_cookie(first)) {
    case Cookie::utf8: return true;
    case Cookie::other: return false;
    case Cookie::none: break;
  }
  if (!is_blank(first)) return true;
  const std::size_t second_at = start + first.n;
  if (second_at == end) return true;
  const Span second = next_line(buf, second_at, end);
  if (has_nul(second)) return false;
  return find_cookie(second) != Cookie::other;
}

// --- reading ------------------------------------------------------------------------------

// The file's bytes, plus one spare byte for a closing '\n'. False: open or read failed (left
// to linecache, whose result for the same failure is its own to give).
struct Buffer {
  char *data = nullptr;
  std::size_t size = 0;
  ~Buffer() { PyMem_RawFree(data); }
};

bool read_file(const char *path, std::size_t size_hint, Buffer *out) noexcept {
  int fd;
  do fd = open(path, O_RDONLY | O_CLOEXEC);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return false;
  std::size_t capacity = size_hint + 2, size = 0;  // +1 to see EOF in one read, +1 spare
  char *data = static_cast<char *>(PyMem_RawMalloc(capacity));
  bool ok = data != nullptr;
  while (ok) {
    if (capacity - size < 2) {
      char *grown = static_cast<char *>(PyMem_RawRealloc(data, capacity * 2));
      if (!grown) {
        ok = false;
        break;
      }
      data = grown;
      capacity *= 2;
    }
    const ssize_t got = read(fd, data + size, capacity - size - 1);
    if (got > 0) {
      size += std::size_t(got);
    } else if (got == 0) {
      break;
    } else if (errno != EINTR) {
      ok = false;
    }
  }
  close(fd);
  if (!ok) {
    PyMem_RawFree(data);
    return false;
  }
  out->data = data;
  out->size = size;
  return true;
}

// TextIOWrapper's universal newlines in place: "\r\n" and a lone "\r" become "\n". Every byte
// of a multi-byte UTF-8 sequence is >= 0x80, so this commutes with decoding.
std::size_t translate_newlines(char *p, std::size_t n) noexcept {
  char *w = static_cast<char *>(std::memchr(p, '\r', n));
  if (!w) return n;
  const char *r = w, *end = p + n;
  while (r < end) {
    const char c = *r++;
    if (c == '\r') {
      *w++ = '\n';
      if (r < end && *r == '\n') ++r;
    } else {
      *w++ = c;
    }
  }
  return std::size_t(w - p);
}

// No byte with the high bit set: the text is ASCII, and every line is its bytes as they are.
bool is_ascii(const char *p, std::size_t n) noexcept {
  std::uint64_t acc = 0, w[4];
  std::size_t i = 0;
  for (; i + sizeof w <= n; i += sizeof w) {
    std::memcpy(w, p + i, sizeof w);
    acc |= w[0] | w[1] | w[2] | w[3];
  }
  for (; i < n; ++i) acc |= static_cast<unsigned char>(p[i]);
  return (acc & 0x8080808080808080ull) == 0;
}

// One line as str: an ASCII line is copied into a compact ASCII str (what the decoder makes of
// it), any other is decoded strictly as UTF-8, as TextIOWrapper does.
inline PyObject *line_str(const char *p, std::size_t n, bool ascii) noexcept {
  if (!ascii) return PyUnicode_DecodeUTF8(p, Py_ssize_t(n), nullptr);
  PyObject *line = PyUnicode_New(Py_ssize_t(n), 127);
  if (line) std::memcpy(PyUnicode_DATA(line), p, n);
  return line;
}

// The lines of text[0, n), which ends in '\n'. nullptr with UnicodeDecodeError (the file is
// not UTF-8: linecache gives []) or MemoryError.
PyObject *split_lines(const char *text, std::size_t n) noexcept {
  // Where each line ends, found once, so the list is made at its size.
  std::size_t capacity = n / 32 + 16, count = 0;
  std::size_t *ends = static_cast<std::size_t *>(PyMem_Malloc(capacity * sizeof *ends));
  for (const char *p = text, *end = text + n; ends && p < end; ++count) {
    if (count == capacity) {
      capacity *= 2;
      std::size_t *grown =
          static_cast<std::size_t *>(PyMem_Realloc(ends, capacity * sizeof *ends));
      if (!grown) PyMem_Free(ends);
      ends = grown;
      if (!ends) break;
    }
    p = static_cast<const char *>(std::memchr(p, '\n', std::size_t(end - p))) + 1;
    ends[count] = std::size_t(p - text);
  }
  PyObject *lines = ends ? PyList_New(Py_ssize_t(count)) : PyErr_NoMemory();
  const bool ascii = is_ascii(text, n);
  for (std::size_t i = 0, start = 0; lines && i < count; start = ends[i++]) {
    PyObject *line = line_str(text + start, ends[i] - start, ascii);
    if (!line) Py_CLEAR(lines);
    else PyList_SET_ITEM(lines, Py_ssize_t(i), line);
  }
  PyMem_Free(ends);
  return lines;
}

// --- st_mtime -------------------------------------------------------------------------------

// os.stat's st_mtime is posixmodule.c fill_time's `sec + 1e-9*nsec`. Whether the compiler that
// built CPython fused that multiply-add (clang's default on targets with FMA) is not visible
// from here; where the two roundings give different doubles, os.stat itself decides once (and
// on every such file from then on if its value was neither: a file that changed meanwhile, or
// another formula).
enum class MtimeRule { unknown, separate, fused, ask };
MtimeRule mtime_rule = MtimeRule::unknown;

// os.stat(filename).st_mtime, or nullptr with an exception.
PyObject *os_stat_mtime(PyObject *filename) {
  PyObject *os = import_module(s_os);
  if (!os) return nullptr;
  PyObject *st = PyObject_CallMethodOneArg(os, s_stat, filename);
  Py_DECREF(os);
  if (!st) return nullptr;
  PyObject *mtime = PyObject_GetAttr(st, s_st_mtime);
  Py_DECREF(st);
  return mtime;
}

// nullptr with an exception: os.stat failed (the file went away: left to linecache).
PyObject *mtime_float(PyObject *filename, const struct stat &st) {
  const double sec = double(st.st_mtim.tv_sec), nsec = double(st.st_mtim.tv_nsec);
  volatile double scaled = 1e-9 * nsec;  // volatile: two roundings, never contracted
  const double separate = sec + scaled;
  const double fused = std::fma(1e-9, nsec, sec);
  if (mtime_rule != MtimeRule::ask) {
    if (separate == fused || mtime_rule == MtimeRule::separate) return PyFloat_FromDouble(separate);
    if (mtime_rule == MtimeRule::fused) return PyFloat_FromDouble(fused);
  }
  PyObject *mtime = os_stat_mtime(filename);
  if (!mtime || mtime_rule == MtimeRule::ask) return mtime;
  if (PyFloat_CheckExact(mtime)) {
    const double v = PyFloat_AS_DOUBLE(mtime);
    mtime_rule = v == separate ? MtimeRule::separate : v == fused ? MtimeRule::fused : MtimeRule::ask;
  }
  return mtime;
}

// --- the read path --------------------------------------------------------------------------

// Not in the cache: the lines read natively (stored in linecache.cache), or
// kLeaveToLinecache (a borrowed marker, never a result) when linecache must decide, or nullptr
// with an exception.
PyObject *const kLeaveToLinecache = Py_None;

PyObject *read_lines(PyObject *linecache, PyObject *filename) {
  // os.path.isabs (POSIX): the name starts with '/'. Relative names are searched along
  // sys.path, `<...>` names are not files: both linecache's.
  if (PyUnicode_GetLength(filename) <= 0 || PyUnicode_ReadChar(filename, 0) != '/') {
    if (PyErr_Occurred()) return nullptr;
    return kLeaveToLinecache;
  }
  // os.stat's own conversion (the filesystem encoding, surrogateescape).
  PyObject *path = PyUnicode_EncodeFSDefault(filename);
  if (!path) {
    if (PyErr_ExceptionMatches(PyExc_MemoryError)) return nullptr;
    PyErr_Clear();
    return kLeaveToLinecache;
  }
  const char *cpath = PyBytes_AS_STRING(path);
  if (std::strlen(cpath) != std::size_t(PyBytes_GET_SIZE(path))) {  // a NUL: os.stat's ValueError
    Py_DECREF(path);
    return kLeaveToLinecache;
  }
  struct stat st;
  int rc;
  Py_BEGIN_ALLOW_THREADS
  rc = stat(cpath, &st);
  Py_END_ALLOW_THREADS
  if (rc != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 ||
      std::uint64_t(st.st_size) > std::uint64_t(PY_SSIZE_T_MAX / 4)) {
    Py_DECREF(path);
    return kLeaveToLinecache;
  }
  // io.FileIO's audit event for tokenize.open's open(fullname, 'rb'). A hook that raises is
  // left to linecache, which sees it raise again and reacts as it does.
  if (PySys_Audit("open", "Osi", filename, "r", O_RDONLY | O_CLOEXEC) < 0) {
    Py_DECREF(path);
    if (PyErr_ExceptionMatches(PyExc_MemoryError)) return nullptr;
    PyErr_Clear();
    return kLeaveToLinecache;
  }
  Buffer buf;
  bool read_ok;
  Py_BEGIN_ALLOW_THREADS
  read_ok = read_file(cpath, std::size_t(st.st_size), &buf);
  Py_END_ALLOW_THREADS
  Py_DECREF(path);
  if (!read_ok) return kLeaveToLinecache;

  const bool bom = buf.size >= 3 && std::memcmp(buf.data, "\xEF\xBB\xBF", 3) == 0;
  const std::size_t start = bom ? 3 : 0;
  if (!decodes_as_utf8(buf.data, start, buf.size)) return kLeaveToLinecache;
  char *text = buf.data + start;
  std::size_t n = translate_newlines(text, buf.size - start);
  if (text[n - 1] != '\n') text[n++] = '\n';  // updatecache's lines[-1] += '\n' (spare byte)
  PyObject *lines = split_lines(text, n);
  if (!lines) {
    if (!PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) return nullptr;
    PyErr_Clear();
    return PyList_New(0);  // linecache: except (OSError, UnicodeDecodeError, SyntaxError)
  }

  PyObject *size = PyLong_FromLongLong(st.st_size);
  PyObject *mtime = size ? mtime_float(filename, st) : nullptr;
  if (!mtime) {
    Py_XDECREF(size);
    Py_DECREF(lines);
    if (PyErr_ExceptionMatches(PyExc_MemoryError)) return nullptr;
    PyErr_Clear();
    return kLeaveToLinecache;
  }
  PyObject *entry = PyTuple_Pack(4, size, mtime, lines, filename);
  Py_DECREF(size);
  Py_DECREF(mtime);
  // The module global at the time of the store, as updatecache's `cache[filename] = ...`.
  PyObject *cache = entry ? linecache_cache(linecache) : nullptr;
  const int stored = cache ? PyObject_SetItem(cache, filename, entry) : -1;
  Py_XDECREF(cache);
  Py_XDECREF(entry);
  if (stored < 0) {
    // updatecache's `cache[filename] = ...` without the global: a NameError.
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_NameError, "name 'cache' is not defined");
    Py_DECREF(lines);
    return nullptr;
  }
  return lines;
}

PyObject *lines_from(PyObject *linecache, PyObject *filename) {
  // getlines itself decides when it is not linecache's own, and so does updatecache on a miss.
  if (!PyUnicode_CheckExact(filename) || !PyModule_CheckExact(linecache) ||
      !is_own_function(PyModule_GetDict(linecache), s_getlines))
    return fallback(linecache, filename);
  PyObject *cache = linecache_cache(linecache);
  if (!cache) {
    PyErr_Clear();
    return fallback(linecache, filename);
  }
  if (!PyDict_CheckExact(cache)) {
    Py_DECREF(cache);
    return fallback(linecache, filename);
  }
  // The lookup may compare `filename` with a colliding key's __eq__ (any code): the entry is
  // held before anything else runs.
  PyObject *entry = Py_XNewRef(PyDict_GetItemWithError(cache, filename));
  PyObject *result;
  if (entry) {
    result = PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 4 &&
                     PyList_Check(PyTuple_GET_ITEM(entry, 2))
                 ? Py_NewRef(PyTuple_GET_ITEM(entry, 2))
                 : fallback(linecache, filename);  // a lazy entry, or not linecache's shape
    Py_DECREF(entry);
  } else if (PyErr_Occurred()) {
    PyErr_Clear();  // linecache repeats the lookup and raises (or not) itself
    result = fallback(linecache, filename);
  } else if (!is_own_function(PyModule_GetDict(linecache), s_updatecache)) {
    result = fallback(linecache, filename);
  } else {
    result = read_lines(linecache, filename);
    if (result == kLeaveToLinecache) result = fallback(linecache, filename);
    else if (!result) result = after_error(cache);
  }
  Py_DECREF(cache);
  return result;
}

}  // namespace

PyObject *source_lines(PyObject *filename) {
  if (!linecache_module) {
    if (!init_names()) return nullptr;
    linecache_module = import_module(s_linecache);
    if (!linecache_module) return nullptr;
  }
  return lines_from(linecache_module, filename);
}

PyObject *source_line(PyObject *filename, long lineno) {
  PyObject *lines = source_lines(filename);
  if (!lines) return nullptr;
  PyObject *line = 1 <= lineno && lineno <= PyList_GET_SIZE(lines)
                       ? Py_NewRef(PyList_GET_ITEM(lines, lineno - 1))
                       : PyUnicode_FromStringAndSize("", 0);
  Py_DECREF(lines);
  return line;
}

}  // namespace callsite::detail
