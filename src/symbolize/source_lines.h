// symbolize/source_lines.h — a source file's lines exactly as linecache.getlines() gives them,
// read natively where the result is certain to be the same, with linecache.cache filled as
// linecache itself fills it (one copy per process; linecache.checkcache keeps working).
#pragma once
#include <Python.h>

namespace callsite::detail {

/// What `linecache.getlines(filename)` (module_globals=None) returns, leaving
/// `linecache.cache` as that call would leave it. GIL held.
///
/// - `filename` is borrowed and may be any object.
/// - Returns a new reference to a list (`PyList_Check`): when linecache holds the file, it is
///   the very list stored in `linecache.cache[filename]`, shared, so the caller must not
///   mutate it; otherwise a list of what was read (possibly empty: no source). Its items are
///   whatever linecache holds, normally `str`s ending in "\n"; check them before relying on it.
/// - Read natively only when the answer cannot differ from linecache's: `filename` is an exact
///   `str` naming an absolute path of a regular file, not yet in the cache, whose bytes decode
///   as UTF-8 (with or without a BOM, no coding cookie or one naming UTF-8). It is then stored
///   as linecache stores it: `cache[filename] = (st_size, st_mtime, lines, filename)`. Every
///   other case (a lazy entry, a `<...>` name, a relative name, another encoding, something
///   unusual on disk) calls `linecache.getlines(filename)` itself, and so does a linecache
///   whose getlines (or, for a name not cached, updatecache) is not its own function (doctest's
///   patch, a wrapper). Reading natively calls neither tokenize.open nor os.stat nor open
///   through Python: a replacement of those (a fake file system) is not seen for a real file.
/// - Returns nullptr with a Python exception only where linecache.getlines itself raises
///   (a TypeError for a name that is not a path, whatever a monkeypatched linecache raises),
///   when it returns something that is not a list (TypeError), or when no memory is left even
///   for an empty list. A MemoryError while reading is handled as linecache handles it: the
///   cache is cleared and the result is an empty list.
/// - May run any Python code (the fallback, audit hooks, `__eq__` of keys in linecache.cache):
///   hold what you use across the call. Releases the GIL around the file's stat and read, so
///   it is not noexcept, nor may a caller on the path from a Python entry point be: before
///   3.14 a daemon thread that takes the GIL back during finalization is ended by
///   pthread_exit's forced unwind, which a noexcept frame turns into std::terminate.
PyObject *source_lines(PyObject *filename);

/// What `linecache.getline(filename, lineno)` returns: a new reference to the item `lineno`
/// (1-based) of `source_lines(filename)`, or to '' when `lineno` is out of range. nullptr with
/// an exception as source_lines. Same contract otherwise.
PyObject *source_line(PyObject *filename, long lineno);

}  // namespace callsite::detail
