// native/reify.cc — runs reifiers lazily, validates what they return, caches per
// (executable, state), and turns failures into one warning and a placeholder frame.
#include "native/reify.h"

#include <cstring>
#include <exception>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "native/executable.h"
#include "symbolize/symbolize.h"

namespace callsite::native {

PyObject *reification_warning = nullptr;

PyObject *executable_name(const Executable *exe) {
  if (ExecutableObject *owner = python_owned(exe)) return Py_NewRef(owner->name);
  return PyUnicode_DecodeUTF8(exe->name ? exe->name : "?", exe->name ? strlen(exe->name) : 1,
                              "replace");
}

PyObject *placeholder_filename(const Executable *exe) {
  PyObject *name = executable_name(exe);
  if (!name) return nullptr;
  PyObject *filename = PyUnicode_FromFormat("<%s:%U>", exe->kind ? exe->kind : "native", name);
  Py_DECREF(name);
  return filename;
}

namespace {

using StateMap = std::unordered_map<std::uintptr_t, Reified>;

// Two generations per executable (see kReifyGeneration): a miss goes into `young`; once
// `young` holds kReifyGeneration entries, `old` is released and `young` becomes `old`; a hit
// in `old` moves its node back into `young` (node handles keep the element's address).
struct PerExecutable {
  StateMap young, old;
  Reified recursing;  ///< placeholder for a reifier that symbolizes its own frame
  bool warned = false;
};

// Node-based maps: a Reified never moves once inserted, so FrameInfo can borrow from it.
// Never destroyed: its references may outlive interpreter finalization.
auto &cache = *new std::unordered_map<const Executable *, PerExecutable>();
std::size_t hits = 0, misses = 0;

// (executable, state) pairs this thread is reifying right now: a reifier that captures and
// symbolizes its own frame gets a placeholder instead of recursing forever. Per thread: a
// Python reifier releases the GIL, and another thread reaching the same pair meanwhile is not
// recursing (it runs the reifier too; the first result is cached).
thread_local std::vector<std::pair<const Executable *, std::uintptr_t>> in_progress;

// References reify() gives up between storing an entry and returning it, when releasing them
// could run Python (a code object's weakref callback may reify, clear the cache, or drop an
// executable): the pointer reify() returns must not be invalidated by its own clean-up. They
// are released at the start of the next reify() call. Never destroyed, as `cache`.
auto &graveyard = *new std::vector<PyObject *>();

// Releases `o` now when that cannot run Python (other references remain), else later.
void bury(PyObject *o) {
  if (!o) return;
  if (Py_REFCNT(o) > 1) {
    Py_DECREF(o);
    return;
  }
  try {
    graveyard.push_back(o);
  } catch (const std::exception &) {  // out of memory: keep it alive rather than run Python
  }
}

// Moved out first: a finalizer may call reify() and bury more.
void flush_graveyard() {
  if (graveyard.empty()) return;
  std::vector<PyObject *> dead;
  dead.swap(graveyard);
  for (PyObject *o : dead) Py_DECREF(o);
}

// KeyboardInterrupt, SystemExit, GeneratorExit (a BaseException that is not an Exception):
// the program is being stopped, not a reifier mistake; it propagates, nothing is cached.
bool interrupt_pending() { return PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception); }

void clear(Reified &r) {
  Py_CLEAR(r.filename);
  Py_CLEAR(r.name);
  Py_CLEAR(r.qualname);
  Py_CLEAR(r.code);
}

// clear(), releasing through the graveyard.
void bury_all(Reified &r) {
  bury(r.filename);
  bury(r.name);
  bury(r.qualname);
  bury(r.code);
  r.filename = r.name = r.qualname = r.code = nullptr;
}

// Moved out of the cache first: releasing a reified code object may run arbitrary
// deallocators, which may reify again.
void release(StateMap dead) {
  for (auto &[state, r] : dead) clear(r);
}

// The cached entry of `state`, or nullptr; an entry found in the old generation moves back
// into the young one, at the same address.
Reified *lookup(PerExecutable &per, std::uintptr_t state) {
  if (auto it = per.young.find(state); it != per.young.end()) return &it->second;
  auto node = per.old.extract(state);
  if (node.empty()) return nullptr;
  return &per.young.insert(std::move(node)).position->second;
}

// "<kind:name>", no line: what a frame shows when its reifier could not say where it is.
bool make_placeholder(const Executable *exe, Reified *out) {
  clear(*out);
  *out = Reified{};
  out->placeholder = true;
  out->name = executable_name(exe);
  if (!out->name) return false;
  out->qualname = Py_NewRef(out->name);
  out->filename = placeholder_filename(exe);
  return out->filename != nullptr;
}

// "ValueError: message" of the pending exception (cleared), for the warning text.
std::string describe_pending_exception() {
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  std::string text = type ? reinterpret_cast<PyTypeObject *>(type)->tp_name : "error";
  if (PyObject *s = value ? PyObject_Str(value) : nullptr) {
    if (const char *utf8 = PyUnicode_AsUTF8(s); utf8 && *utf8) text += std::string(": ") + utf8;
    Py_DECREF(s);
  }
  PyErr_Clear();
  Py_XDECREF(type);
  Py_XDECREF(value);
  Py_XDECREF(tb);
  return text;
}

// A line/column field: None → -1; an int >= 0; anything else is the reifier's mistake.
bool parse_position(PyObject *value, const char *field, int *out, std::string *why) {
  if (value == Py_None) return *out = -1, true;
  if (!PyLong_Check(value) || PyBool_Check(value)) {
    *why = std::string(field) + " must be an int or None, not " + Py_TYPE(value)->tp_name;
    return false;
  }
  const long v = PyLong_AsLong(value);
  if (v == -1 && PyErr_Occurred()) {
    PyErr_Clear();
    *why = std::string(field) + " is out of range";
    return false;
  }
  if (v < 0 || v > 0x7fffffff) {
    *why = std::string(field) + " must be >= 0, got " + std::to_string(v);
    return false;
  }
  *out = int(v);
  return true;
}

// Stored as an exact str: a subclass's __eq__/__hash__/__del__ would run Python wherever the
// cache compares or releases it.
bool parse_str(PyObject *value, const char *field, bool optional, PyObject **out,
               std::string *why) {
  if (optional && value == Py_None) return true;
  if (!PyUnicode_Check(value)) {
    *why = std::string(field) + " must be a str" + (optional ? " or None" : "") + ", not " +
           Py_TYPE(value)->tp_name;
    return false;
  }
  *out = PyUnicode_CheckExact(value) ? Py_NewRef(value) : PyUnicode_FromObject(value);
  if (*out) return true;
  *why = describe_pending_exception();
  return false;
}

// A file name CPython would read differently: code objects built from C strings stop at a
// NUL, and linecache (3.12) raises on one instead of finding no source.
bool no_nul(PyObject *filename, std::string *why) {
  if (PyUnicode_FindChar(filename, 0, 0, PyUnicode_GET_LENGTH(filename), 1) < 0) return true;
  *why = "filename must not contain a NUL character";
  return false;
}

// The reifier's result: a callsite.native.Location, i.e. a tuple (filename, lineno, name=None,
// qualname=None, end_lineno=None, colno=None, end_colno=None, code=None); None: unknown.
bool parse_python_result(PyObject *result, Reified *out, std::string *why) {
  if (!PyTuple_Check(result)) {
    *why = std::string("expected a callsite.native.Location or a (filename, lineno, ...) tuple, "
                       "got ") + Py_TYPE(result)->tp_name;
    return false;
  }
  const Py_ssize_t n = PyTuple_GET_SIZE(result);
  if (n < 2 || n > 8) {
    *why = "expected a Location tuple of 2 to 8 items (filename, lineno, name, qualname, "
           "end_lineno, colno, end_colno, code), got " + std::to_string(n) + " items";
    return false;
  }
  auto item = [&](Py_ssize_t i) { return i < n ? PyTuple_GET_ITEM(result, i) : Py_None; };
  if (!parse_str(item(0), "filename", false, &out->filename, why) ||
      !no_nul(out->filename, why) ||
      !parse_position(item(1), "lineno", &out->lineno, why) ||
      !parse_str(item(2), "name", true, &out->name, why) ||
      !parse_str(item(3), "qualname", true, &out->qualname, why) ||
      !parse_position(item(4), "end_lineno", &out->end_lineno, why) ||
      !parse_position(item(5), "colno", &out->colno, why) ||
      !parse_position(item(6), "end_colno", &out->end_colno, why))
    return false;
  if (PyObject *code = item(7); code != Py_None) {
    if (!PyCode_Check(code)) {
      *why = std::string("code must be a code object or None, not ") + Py_TYPE(code)->tp_name;
      return false;
    }
    out->code = Py_NewRef(code);
  }
  return true;
}

bool parse_native_result(const NativeLocation &loc, Reified *out, std::string *why) {
  if (!loc.filename) return *why = "the reifier gave no filename", false;
  auto decode = [&](const char *s, const char *field, PyObject **dst) {
    if (!s) return true;
    *dst = PyUnicode_DecodeUTF8(s, Py_ssize_t(strlen(s)), "strict");
    if (*dst) return true;
    PyErr_Clear();
    *why = std::string(field) + " is not valid UTF-8";
    return false;
  };
  if (!decode(loc.filename, "filename", &out->filename) ||
      !decode(loc.name, "name", &out->name) || !decode(loc.qualname, "qualname", &out->qualname))
    return false;
  if (loc.code && !PyCode_Check(loc.code))
    return *why = std::string("code must be a code object, not ") + Py_TYPE(loc.code)->tp_name,
           false;
  out->code = loc.code;  // the reifier gave a new reference: ours now
  out->lineno = loc.lineno < 0 ? -1 : loc.lineno;
  out->end_lineno = loc.end_lineno < 0 ? -1 : loc.end_lineno;
  out->colno = loc.colno < 0 ? -1 : loc.colno;
  out->end_colno = loc.end_colno < 0 ? -1 : loc.end_colno;
  return true;
}

// Runs the reifier into `out`; false with the reason in `why` (no Python error left set).
bool run_reifier(const Executable *exe, std::uintptr_t state, Reified *out, std::string *why) {
  if (exe->reify == &python_reifier) {
    ExecutableObject *owner = python_owned(exe);
    PyObject *result;
    if (PyObject *table = owner->locations) {  // locations=[...]: no call
      const Py_ssize_t n = PyTuple_GET_SIZE(table);
      if (state >= std::uintptr_t(n))
        return *why = "state " + std::to_string(state) + " is past the end of locations= (" +
                      std::to_string(n) + " location" + (n == 1 ? "" : "s") + ": states 0 to " +
                      std::to_string(n - 1) + ")",
               false;
      result = Py_NewRef(PyTuple_GET_ITEM(table, Py_ssize_t(state)));
    } else {
      if (!owner->reifier) return *why = "the reifier was cleared", false;
      // Held: the reifier may clear the executable's reference to itself.
      PyObject *reifier = Py_NewRef(owner->reifier);
      result = PyObject_CallFunction(reifier, "K", (unsigned long long)state);
      Py_DECREF(reifier);
    }
    if (!result) {
      if (!interrupt_pending()) *why = "it raised " + describe_pending_exception();
      return false;
    }
    if (result == Py_None) {  // "no location": a placeholder, but not an error
      Py_DECREF(result);
      return make_placeholder(exe, out) || (*why = describe_pending_exception(), false);
    }
    const bool ok = parse_python_result(result, out, why);
    Py_DECREF(result);
    return ok;
  }
  if (!exe->reify) return *why = "the executable has no reifier", false;
  NativeLocation loc;
  const int rc = exe->reify(exe, state, &loc);
  if (rc != 0) {
    Py_XDECREF(loc.code);
    if (interrupt_pending()) return false;
    *why = PyErr_Occurred() ? "it raised " + describe_pending_exception()
                            : std::string("it returned ") + std::to_string(rc);
    return false;
  }
  if (!parse_native_result(loc, out, why)) {
    Py_XDECREF(loc.code);
    return false;
  }
  return true;
}

// Defaults: name → the executable's name, qualname → name.
bool fill_defaults(const Executable *exe, Reified *r) {
  if (!r->name && !(r->name = executable_name(exe))) return false;
  if (!r->qualname) r->qualname = Py_NewRef(r->name);
  return true;
}

// What computing a location gave: the reifier's location, a placeholder (the reifier failed,
// `why` says how), or nothing (interrupted, or no memory for a placeholder: an error is set).
enum class Outcome { located, placeholder, error };

// Runs the reifier for (exe, state) into `out`, marked as in progress on this thread.
Outcome compute(const Executable *exe, std::uintptr_t state, Reified *out, std::string *why) {
  in_progress.emplace_back(exe, state);
  const bool ok = run_reifier(exe, state, out, why) && fill_defaults(exe, out);
  in_progress.pop_back();
  if (ok) return Outcome::located;
  if (interrupt_pending()) {
    clear(*out);
    return Outcome::error;
  }
  if (why->empty()) *why = describe_pending_exception();
  return make_placeholder(exe, out) ? Outcome::placeholder : Outcome::error;
}

bool in_progress_here(const Executable *exe, std::uintptr_t state) {
  for (const auto &key : in_progress)
    if (key.first == exe && key.second == state) return true;
  return false;
}

// Caches `r` for `state` in `slot` unless a nested call cached it meanwhile (the first one
// stays, `r` is cleared). A full young generation becomes the old one; the old one moves to
// `dead`, for the caller to release once it no longer uses `slot`. The cached entry.
Reified *store(PerExecutable &slot, std::uintptr_t state, Reified &r, StateMap *dead) {
  if (Reified *entry = lookup(slot, state)) {
    bury_all(r);
    return entry;
  }
  if (slot.young.size() >= kReifyGeneration) {
    *dead = std::move(slot.old);
    slot.old = std::move(slot.young);
    slot.young = StateMap();
  }
  return &slot.young.emplace(state, r).first->second;
}

// reify() for a state not in the cache of `per` (exe's): compute, warn once, store. Every
// call into Python (the reifier, the warning) comes before the store, and nothing released
// after it runs Python (the graveyard): the entry returned is the one just looked up.
const Reified *reify_miss(const Executable *exe, std::uintptr_t state, PerExecutable &per) {
  if (in_progress_here(exe, state)) {
    // Not cached per state: the outer call caches the real result.
    if (!per.recursing.filename && !make_placeholder(exe, &per.recursing)) return nullptr;
    return &per.recursing;
  }
  // The reifier may drop the last other reference to the executable: hold it until the
  // entry is returned (released through the graveyard, as the cache entries it owns).
  PyObject *owner = Py_XNewRef(exe->owner);
  Reified r;
  std::string why;
  const Outcome outcome = compute(exe, state, &r, &why);
  if (outcome == Outcome::error) {
    bury_all(r);
    bury(owner);
    return nullptr;
  }
  // The reifier and the warning may run arbitrary code (reify other states, destroy other
  // executables): the slot is looked up again after them rather than trusting `per`.
  bool warned_ok = true;
  if (outcome == Outcome::placeholder && !cache[exe].warned) {
    cache[exe].warned = true;  // before warning: a showwarning hook may reify again
    warned_ok = warn_reifier_failed(exe, "reifier", state, why, "showing a placeholder frame");
  }
  StateMap dead;
  Reified *entry = store(cache[exe], state, r, &dead);
  for (auto &[k, d] : dead) bury_all(d);
  bury(owner);
  return warned_ok ? entry : nullptr;
}

}  // namespace

namespace {

// callsite.native.ReificationWarning with `base` (nullptr: none) before RuntimeWarning.
PyObject *new_reification_warning(PyObject *base) {
  PyObject *bases = base ? PyTuple_Pack(2, base, PyExc_RuntimeWarning)
                         : PyTuple_Pack(1, PyExc_RuntimeWarning);
  if (!bases) return nullptr;
  PyObject *category = PyErr_NewExceptionWithDoc(
      "callsite.native.ReificationWarning",
      "A native frame's reifier raised or returned something that is not a location; the "
      "frame is shown as a placeholder. Reported once per executable.\n\n"
      R"doc(Example:
    ::

        import warnings
        import callsite
        from callsite import native

        broken = native.Executable("broken", lambda pc: 1 / 0)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with native.frame(broken):
                print(callsite.capture()[0].filename)        # a placeholder
        print(caught[0].category.__name__)                   # ReificationWarning
)doc",
      bases, nullptr);
  Py_DECREF(bases);
  return category;
}

}  // namespace

bool init_reify() {
  // A RuntimeWarning until the package registers its base (set_reification_warning_base):
  // embedded without the package, it stays one.
  if (!reification_warning) reification_warning = new_reification_warning(nullptr);
  if (!reification_warning) return false;
  set_native_symbolizer(&symbolize_native);
  return true;
}

bool warn_reifier_failed(const Executable *exe, const char *reifier, std::uintptr_t state,
                         const std::string &why, const char *shown) {
  PyObject *category = reification_warning ? reification_warning : PyExc_RuntimeWarning;
  return PyErr_WarnFormat(category, 1,
                          "callsite.native: the %s of %s executable '%s' failed for state %llu: "
                          "%s; %s (reported once per executable)",
                          reifier, exe->kind ? exe->kind : "native", exe->name ? exe->name : "?",
                          (unsigned long long)state, why.c_str(), shown) == 0;
}

bool set_reification_warning_base(PyObject *base) {
  PyObject *category = new_reification_warning(base);
  if (!category) return false;
  Py_XSETREF(reification_warning, category);
  return true;
}

const Reified *reify(const Executable *exe, std::uintptr_t state) {
  try {
    flush_graveyard();  // may run Python: before anything is looked up
    PerExecutable &per = cache[exe];
    if (Reified *r = lookup(per, state)) {
      ++hits;
      return r;
    }
    ++misses;
    return reify_miss(exe, state, per);
  } catch (const std::exception &) {
    // Only the containers' bad_alloc: not `...`, which would also catch the forced unwind of
    // a daemon thread ended by finalization inside the reifier (it has no thread state).
    PyErr_NoMemory();
    return nullptr;
  }
}

void forget(const Executable *exe) noexcept {
  auto it = cache.find(exe);
  if (it == cache.end()) return;
  // Move out first: releasing a reified code object may run arbitrary deallocators.
  StateMap young = std::move(it->second.young), old = std::move(it->second.old);
  Reified recursing = it->second.recursing;
  cache.erase(it);
  release(std::move(young));
  release(std::move(old));
  clear(recursing);
}

PyObject *cache_info() noexcept {
  std::size_t entries = 0;
  for (const auto &[exe, per] : cache) entries += per.young.size() + per.old.size();
  return Py_BuildValue("{s:n,s:n,s:n,s:n,s:n}", "executables", Py_ssize_t(cache.size()),
                       "entries", Py_ssize_t(entries), "hits", Py_ssize_t(hits), "misses",
                       Py_ssize_t(misses), "generation", Py_ssize_t(kReifyGeneration));
}

// --- what symbolize asks for native entries (registered by init_reify) --------------------

bool symbolize_native(const RawFrame &frame, FrameInfo *out) {
  const Reified *r = reify(frame.executable(), frame.state());
  if (!r) return false;
  out->kind = FrameKind::native;
  out->filename = r->filename;
  out->name = r->name;
  out->qualname = r->qualname;
  out->code = r->code;
  out->lineno = r->lineno;
  out->end_lineno = r->end_lineno;
  out->colno = r->colno;
  out->end_colno = r->end_colno;
  return true;
}

}  // namespace callsite::native
