// native/frame_locals.cc — locals reifiers: who has one, calling it (with the location
// reifier's rules for failures), and callsite.native.FrameLocals, the mapping a visible
// frame's f_locals shows.
//
// CPython has no hook between a reader and a frame's variables (3.12 builds frame.f_locals
// from localsplus and co_localsplusnames into the frame's f_locals; 3.13+ returns a
// FrameLocalsProxy for CO_OPTIMIZED code, and for other code the f_locals object itself,
// Objects/frameobject.c frame_getlocals). The synthetic code is not CO_OPTIMIZED, so every
// version returns what the interpreter frame holds in f_locals: a FrameLocals put there at
// the push (only for frames whose executable has a locals reifier) which calls the reifier on
// each read while the frame is pushed, and is frozen at the pop when anything outlives it.
#include "native/frame_locals.h"

#include <exception>
#include <iterator>
#include <mutex>
#include <thread>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/compat.h"
#include "layouts/active.h"
#include "native/executable.h"
#include "native/greenlets.h"
#include "native/reifier_guard.h"
#include "native/reify.h"
#include "native/shadow_stack.h"

namespace callsite::native {

std::atomic<bool> any_locals{false};
PyTypeObject *frame_locals_type = nullptr;

namespace {

struct CppLocals {
  const Executable *executable;
  LocalsReifier fn;
  void *context;
};
struct FrameEntry {
  const NativeLink *link;
  LocalsReifier fn;
  void *context;
  const ThreadStack *thread;  ///< the stack of the thread that registered it
};

// Few entries (executables of a JIT, frames that carry their own reifier): linear scans, the
// frame entries from the newest (frames register and forget in LIFO order).
auto &cpp_locals = *new std::vector<CppLocals>();
auto &warned = *new std::unordered_set<const Executable *>();

// C++ frames may be pushed and popped without the GIL (NativeFrameWithLocals registers and
// forgets its reifier then): the frame entries have a lock of their own, held for a scan or
// a change of the short vector only, never across a call into Python or a wait for the GIL.
// A spin lock: uncontended (the common case, every Python frame handle given `locals`
// registers and forgets) it costs two atomic operations, where a mutex costs two calls.
class SpinLock {
 public:
  void lock() noexcept {
    while (held_.test_and_set(std::memory_order_acquire)) std::this_thread::yield();
  }
  void unlock() noexcept { held_.clear(std::memory_order_release); }

 private:
  std::atomic_flag held_ = ATOMIC_FLAG_INIT;
};

auto &frame_entries = *new std::vector<FrameEntry>();
SpinLock frame_entries_lock;

const FrameEntry *entry_of(const NativeLink *link) {
  for (auto it = frame_entries.rbegin(); it != frame_entries.rend(); ++it)
    if (it->link == link) return &*it;
  return nullptr;
}

// What reads `exe`'s variables, copied (and held) before the call: the reifier may change
// the tables.
struct Source {
  LocalsReifier fn = nullptr;
  void *context = nullptr;
  PyObject *callable = nullptr;  // strong
  explicit operator bool() const { return fn || callable; }
};

Source source_of(const Executable *exe, const NativeLink *link) {
  Source s;
  if (link) {
    std::lock_guard<SpinLock> hold(frame_entries_lock);
    if (const FrameEntry *e = entry_of(link)) {
      s.fn = e->fn;
      s.context = e->context;
      return s;
    }
  }
  if (ExecutableObject *owner = python_owned(exe); owner && owner->locals) {
    s.callable = Py_NewRef(owner->locals);
    return s;
  }
  for (const CppLocals &e : cpp_locals)
    if (e.executable == exe) {
      s.fn = e.fn;
      s.context = e.context;
      return s;
    }
  return s;
}

// One warning per executable (marked before warning: a showwarning hook may read locals
// again). False: the warning was turned into an error.
bool warn(const Executable *exe, std::uintptr_t state, const std::string &why) {
  if (!warned.insert(exe).second) return true;
  return warn_reifier_failed(exe, "locals reifier", state, why, "the frame shows no variables");
}

std::string describe_exception() {
  PyObject *exc = compat::take_raised_exception();
  PyObject *text = exc ? PyObject_Repr(exc) : nullptr;
  const char *utf8 = text ? PyUnicode_AsUTF8(text) : nullptr;
  std::string why = utf8 ? std::string("raised ") + utf8 : std::string("raised");
  PyErr_Clear();
  Py_XDECREF(text);
  Py_XDECREF(exc);
  return why;
}

// The reifier's result as a new dict of str keys; nullptr (no error) with `why` otherwise.
PyObject *as_variables(PyObject *result, std::string *why) {
  PyObject *dict = nullptr;
  if (PyDict_Check(result)) {
    dict = PyDict_Copy(result);
  } else if (is_variables_mapping(result)) {
    dict = PyDict_New();
    if (dict && PyDict_Merge(dict, result, 1) < 0) Py_CLEAR(dict);
  } else {
    *why = std::string("returned ") + Py_TYPE(result)->tp_name + ", not a mapping of names";
    return nullptr;
  }
  if (!dict) {
    *why = describe_exception();
    return nullptr;
  }
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(dict, &pos, &key, &value))
    if (!PyUnicode_Check(key)) {
      *why = std::string("returned a mapping with a ") + Py_TYPE(key)->tp_name +
             " key (variable names are str)";
      Py_DECREF(dict);
      return nullptr;
    }
  return dict;
}

PyObject *call(const Source &s, const Executable *exe, std::uintptr_t state) {
  if (s.fn) return s.fn(exe, state, s.context);
  PyObject *arg = PyLong_FromUnsignedLongLong(state);
  PyObject *result = arg ? PyObject_CallOneArg(s.callable, arg) : nullptr;
  Py_XDECREF(arg);
  return result;
}

}  // namespace

bool is_variables_mapping(PyObject *obj) noexcept {
  return PyDict_Check(obj) || (PyMapping_Check(obj) && !PyUnicode_Check(obj) &&
                               !PyBytes_Check(obj) && !PyTuple_Check(obj) && !PyList_Check(obj));
}

const NativeLink *registered_link(const Executable *exe, std::uintptr_t state) noexcept {
  const ThreadStack *here = this_thread();
  std::lock_guard<SpinLock> hold(frame_entries_lock);
  for (auto it = frame_entries.rbegin(); it != frame_entries.rend(); ++it)
    if (it->thread == here && it->link->executable == exe && it->link->state == state)
      return it->link;
  return nullptr;
}

const NativeLink *live_link(const Executable *exe, std::uintptr_t state,
                            std::size_t activation) noexcept {
  for (const NativeLink *seen = innermost(); seen; seen = seen->previous)
    if (seen->executable == exe && seen->state == state && activation-- == 0)
      return origin_of(seen);
  return nullptr;
}

bool has_locals(const Executable *exe, const NativeLink *link) noexcept {
  if (!any_locals) return false;
  if (link) {
    std::lock_guard<SpinLock> hold(frame_entries_lock);
    if (entry_of(link)) return true;
  }
  if (ExecutableObject *owner = python_owned(exe); owner && owner->locals) return true;
  for (const CppLocals &e : cpp_locals)
    if (e.executable == exe) return true;
  return false;
}

PyObject *read_locals(const Executable *exe, std::uintptr_t state, const NativeLink *link) {
  Source s = source_of(exe, link);
  if (!s) return PyDict_New();
  std::string why;
  PyObject *dict = nullptr;
  // A reifier may switch greenlets: the guard must follow them (greenlets.h).
  if (!track_greenlets()) PyErr_Clear();  // the guard then stays the thread's
  ReifierGuard &guard = reifier_guard();
  if (guard.refuses(exe)) {
    why = "it read the variables of a frame of its own executable (re-entered)";
  } else {
    // The reifier may drop the last other reference to the executable.
    PyObject *owner = Py_XNewRef(exe->owner);
    guard.running[guard.depth++] = exe;
    PyObject *result = call(s, exe, state);
    --guard.depth;  // this greenlet's: a switch inside restored it
    if (!result) {
      if (!PyErr_Occurred()) {
        why = "returned nullptr without an error";
      } else if (!PyErr_ExceptionMatches(PyExc_Exception)) {
        Py_XDECREF(owner);
        Py_XDECREF(s.callable);
        return nullptr;  // KeyboardInterrupt, SystemExit: propagated
      } else {
        why = describe_exception();
      }
    } else {
      dict = as_variables(result, &why);
      Py_DECREF(result);
    }
    if (!dict && !PyErr_Occurred() && owner && Py_REFCNT(owner) == 1) {
      // The reifier dropped the executable's last other reference: no warning naming it.
      Py_DECREF(owner);
      Py_XDECREF(s.callable);
      return PyDict_New();
    }
    Py_XDECREF(owner);
  }
  Py_XDECREF(s.callable);
  if (dict) return dict;
  if (!warn(exe, state, why)) return nullptr;
  return PyDict_New();
}

int set_locals(const Executable *exe, LocalsReifier fn, void *context) noexcept {
  if (!exe) {
    PyErr_SetString(PyExc_TypeError, "set_locals: executable must not be null");
    return -1;
  }
  for (auto it = cpp_locals.begin(); it != cpp_locals.end(); ++it)
    if (it->executable == exe) {
      if (fn) {
        it->fn = fn;
        it->context = context;
      } else {
        cpp_locals.erase(it);
      }
      return 0;
    }
  if (!fn) return 0;
  try {
    cpp_locals.push_back({exe, fn, context});
  } catch (const std::exception &) {  // out of memory; never the forced unwind
    PyErr_NoMemory();
    return -1;
  }
  any_locals = true;
  return 0;
}

void forget_locals(const Executable *exe) noexcept {
  warned.erase(exe);
  for (auto it = cpp_locals.begin(); it != cpp_locals.end(); ++it)
    if (it->executable == exe) {
      cpp_locals.erase(it);
      return;
    }
}

// --- callsite.native.FrameLocals ------------------------------------------------------------

namespace {

// Where a read happens: the reading thread, its running Python frame and instruction.
struct ReadSite {
  PyThreadState *thread;
  const void *marker;
  std::uintptr_t code;
  std::intptr_t lasti;
  bool operator==(const ReadSite &) const = default;
};

ReadSite read_site() {
  ReadSite site{compat::current_tstate(), current_marker(), 0, 0};
  callsite_raw_frame top;
  int complete = 0;
  const callsite_walk_request req{&top, 1, 0, 1, nullptr};
  if (site.thread && callsite_active_layout->walk(site.thread, &req, &complete) == 1) {
    site.code = top.tagged;
    site.lasti = top.payload;
  }
  return site;
}

struct FrameLocalsObject {
  PyObject_HEAD
  const NativeLink *link;  ///< the pushed frame, or nullptr once popped
  PyObject *kept;          ///< what the pop read (a dict), or nullptr
  // The last keys() read, while the reads of its items may follow (see item_of_whole_read):
  PyObject *names;   ///< its keys (a list), or nullptr
  PyObject *values;  ///< its values, in the same order (a list)
  Py_ssize_t next;   ///< the index of the item the whole read takes next
  ReadSite site;     ///< where keys() was called
};

inline FrameLocalsObject *as_fl(PyObject *o) { return reinterpret_cast<FrameLocalsObject *>(o); }

void forget_whole_read(FrameLocalsObject *m) {
  Py_CLEAR(m->names);
  Py_CLEAR(m->values);
}

// The variables now: a new dict.
PyObject *current(PyObject *self) {
  FrameLocalsObject *m = as_fl(self);
  if (m->kept) return Py_NewRef(m->kept);
  if (!m->link) return PyDict_New();
  return read_locals(m->link->executable, m->link->state, m->link);
}

// A whole read of a mapping that is not a dict — dict(m), {**m}, d.update(m), pdb's
// `pp locals()` (CPython's dict_merge, Objects/dictobject.c) — calls keys() once, then
// m[key] for each key in order, all from the one instruction that asked for the copy. Each
// m[key] would call the reifier again (each call copying every variable: quadratic), so the
// keys() read is kept, and serves the item reads that follow it in that order from the same
// instruction. Any other access forgets it. Returns a new reference, or nullptr (not such a
// read; no error).
PyObject *item_of_whole_read(FrameLocalsObject *m, PyObject *key) {
  const ReadSite site = read_site();  // first: the public backend's walk may run any code
  const Py_ssize_t i = m->next;
  if (!m->names || m->kept || i >= PyList_GET_SIZE(m->names) ||
      PyList_GET_ITEM(m->names, i) != key || !(site == m->site)) {
    forget_whole_read(m);
    return nullptr;
  }
  PyObject *value = Py_NewRef(PyList_GET_ITEM(m->values, i));
  if (++m->next == PyList_GET_SIZE(m->names)) forget_whole_read(m);
  return value;
}

// keys() read `d`: keep it for the item reads of a whole read (no error on failure).
void remember_whole_read(FrameLocalsObject *m, PyObject *d) {
  forget_whole_read(m);
  if (m->kept || PyDict_GET_SIZE(d) == 0) return;  // kept: reads call nothing anyway
  m->names = PyDict_Keys(d);
  m->values = m->names ? PyDict_Values(d) : nullptr;
  if (!m->values) {
    PyErr_Clear();
    forget_whole_read(m);
    return;
  }
  m->next = 0;
  m->site = read_site();
}

PyObject *fl_subscript(PyObject *self, PyObject *key) {
  if (as_fl(self)->names)
    if (PyObject *value = item_of_whole_read(as_fl(self), key)) return value;
  PyObject *d = current(self);
  if (!d) return nullptr;
  PyObject *v = PyDict_GetItemWithError(d, key);
  if (v) {
    Py_INCREF(v);
  } else if (!PyErr_Occurred()) {
    PyErr_SetObject(PyExc_KeyError, key);
  }
  Py_DECREF(d);
  return v;
}

int fl_ass_subscript(PyObject *self, PyObject *key, PyObject *) {
  (void)self;
  PyErr_Format(PyExc_TypeError,
               "cannot set or delete %R: the variables of a callsite native frame are "
               "read-only (they are what the executable's locals reifier returns)",
               key);
  return -1;
}

Py_ssize_t fl_length(PyObject *self) {
  PyObject *d = current(self);
  if (!d) return -1;
  Py_ssize_t n = PyDict_GET_SIZE(d);
  Py_DECREF(d);
  return n;
}

int fl_contains(PyObject *self, PyObject *key) {
  PyObject *d = current(self);
  if (!d) return -1;
  int r = PyDict_Contains(d, key);
  Py_DECREF(d);
  return r;
}

PyObject *fl_iter(PyObject *self) {
  PyObject *d = current(self);
  if (!d) return nullptr;
  PyObject *it = PyObject_GetIter(d);
  Py_DECREF(d);
  return it;
}

PyObject *fl_repr(PyObject *self) {
  PyObject *d = current(self);
  if (!d) return nullptr;
  PyObject *r = PyObject_Repr(d);
  Py_DECREF(d);
  return r;
}

PyObject *fl_richcompare(PyObject *self, PyObject *other, int op) {
  if (op != Py_EQ && op != Py_NE) Py_RETURN_NOTIMPLEMENTED;
  PyObject *d = current(self);
  if (!d) return nullptr;
  PyObject *o = is_frame_locals(other) ? current(other) : Py_NewRef(other);
  PyObject *r = o ? PyObject_RichCompare(d, o, op) : nullptr;
  Py_XDECREF(o);
  Py_DECREF(d);
  return r;
}

// keys(), items(), values(), get(), copy(): the dict's, on the variables now.
PyObject *delegate(PyObject *self, const char *method, PyObject *const *args, Py_ssize_t n) {
  PyObject *d = current(self);
  if (!d) return nullptr;
  PyObject *name = PyUnicode_FromString(method);
  PyObject *r = nullptr;
  if (name) {
    PyObject *stack[3] = {d, n > 0 ? args[0] : nullptr, n > 1 ? args[1] : nullptr};
    r = PyObject_VectorcallMethod(name, stack, std::size_t(1 + n), nullptr);
    Py_DECREF(name);
  }
  Py_DECREF(d);
  return r;
}
PyObject *fl_keys(PyObject *self, PyObject *) {
  PyObject *d = current(self);
  if (!d) return nullptr;
  remember_whole_read(as_fl(self), d);
  PyObject *keys = PyObject_CallMethod(d, "keys", nullptr);
  Py_DECREF(d);
  return keys;
}
PyObject *fl_items(PyObject *self, PyObject *) { return delegate(self, "items", nullptr, 0); }
PyObject *fl_values(PyObject *self, PyObject *) { return delegate(self, "values", nullptr, 0); }
PyObject *fl_copy(PyObject *self, PyObject *) { return current(self); }
PyObject *fl_get(PyObject *self, PyObject *const *args, Py_ssize_t n) {
  if (n < 1 || n > 2) {
    PyErr_Format(PyExc_TypeError, "get expected 1 or 2 arguments, got %zd", n);
    return nullptr;
  }
  return delegate(self, "get", args, n);
}

int fl_traverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(as_fl(self)->kept);
  Py_VISIT(as_fl(self)->names);
  Py_VISIT(as_fl(self)->values);
  Py_VISIT(Py_TYPE(self));
  return 0;
}

int fl_clear(PyObject *self) {
  Py_CLEAR(as_fl(self)->kept);
  forget_whole_read(as_fl(self));
  return 0;
}

void fl_dealloc(PyObject *self) {
  PyObject_GC_UnTrack(self);
  fl_clear(self);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyMethodDef fl_methods[] = {
    {"keys", fl_keys, METH_NOARGS, "keys($self, /)\n--\n\nthe variables' names now"},
    {"items", fl_items, METH_NOARGS, "items($self, /)\n--\n\nthe variables now"},
    {"values", fl_values, METH_NOARGS, "values($self, /)\n--\n\nthe variables' values now"},
    {"copy", fl_copy, METH_NOARGS, "copy($self, /)\n--\n\na dict of the variables now"},
    {"get", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(fl_get)), METH_FASTCALL,
     "get(name, default=None)"},
    {nullptr, nullptr, 0, nullptr}};

PyType_Slot fl_slots[] = {
    {Py_tp_doc, const_cast<char *>(
                    "The variables of a visible native frame (its frame.f_locals): read through "
                    "the executable's locals reifier on each access while the frame is pushed; "
                    "after the pop, what was read when the frame ended, if anything outlived it "
                    "(a traceback's frame object). Read-only.\n\n"
                    R"doc(Raises:
    TypeError: a write: the variables are read-only.

Example:
    ::

        import sys
        from callsite import native

        regs = {"acc": 41}
        exe = native.Executable("kernel", locations=[native.Location("prog.dsl", 2)],
                                visible=True, locals=lambda pc: dict(regs, pc=pc))

        @exe.frame(state=0)
        def callback():
            frame = sys._getframe(1)          # the kernel frame (3.12+, visible frames)
            return dict(frame.f_locals)       # the reifier runs now, not at the push

        if native.visible_frames_available():
            print(callback())                 # {'acc': 41, 'pc': 0}
)doc")},
    {Py_mp_subscript, reinterpret_cast<void *>(fl_subscript)},
    {Py_mp_ass_subscript, reinterpret_cast<void *>(fl_ass_subscript)},
    {Py_mp_length, reinterpret_cast<void *>(fl_length)},
    {Py_sq_contains, reinterpret_cast<void *>(fl_contains)},
    {Py_tp_iter, reinterpret_cast<void *>(fl_iter)},
    {Py_tp_repr, reinterpret_cast<void *>(fl_repr)},
    {Py_tp_richcompare, reinterpret_cast<void *>(fl_richcompare)},
    {Py_tp_hash, reinterpret_cast<void *>(PyObject_HashNotImplemented)},
    {Py_tp_traverse, reinterpret_cast<void *>(fl_traverse)},
    {Py_tp_clear, reinterpret_cast<void *>(fl_clear)},
    {Py_tp_dealloc, reinterpret_cast<void *>(fl_dealloc)},
    {Py_tp_methods, fl_methods},
    {0, nullptr}};

PyType_Spec fl_spec = {"callsite.native.FrameLocals", int(sizeof(FrameLocalsObject)), 0,
                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_MAPPING |
                           Py_TPFLAGS_DISALLOW_INSTANTIATION,
                       fl_slots};

}  // namespace

PyTypeObject *init_frame_locals_type() noexcept {
  if (!frame_locals_type)
    frame_locals_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&fl_spec));
  return frame_locals_type;
}

bool is_frame_locals(PyObject *obj) noexcept {
  return frame_locals_type && obj && Py_TYPE(obj) == frame_locals_type;
}

namespace {
// One FrameLocals kept from a pop that nothing outlived, for the next push: a push and pop of
// such frames then allocate nothing. One for the process, not one per thread (a thread that
// exits would leave its own behind), GIL-protected: only visible frames hold a FrameLocals,
// and they are pushed and popped with the GIL held.
PyObject *spare = nullptr;
}  // namespace

PyObject *new_frame_locals(const NativeLink *link) noexcept {
  if (PyObject *reused = spare) {
    spare = nullptr;
    as_fl(reused)->link = link;
    return reused;
  }
  if (!frame_locals_type) return nullptr;
  PyObject *exc = compat::take_raised_exception();
  FrameLocalsObject *m = PyObject_GC_New(FrameLocalsObject, frame_locals_type);
  if (m) {
    m->link = link;
    m->kept = m->names = m->values = nullptr;
    m->next = 0;
    PyObject_GC_Track(m);
  }
  PyErr_Clear();  // out of memory: the frame shows {}
  if (exc) compat::restore_raised_exception(exc);
  return reinterpret_cast<PyObject *>(m);
}

bool spare_frame_locals(PyObject *mapping) noexcept {
  // A pending whole read holds values, whose release may run any code: not here.
  if (spare || !is_frame_locals(mapping) || Py_REFCNT(mapping) != 1 || as_fl(mapping)->kept ||
      as_fl(mapping)->names)
    return false;
  as_fl(mapping)->link = nullptr;
  spare = mapping;
  return true;
}

void freeze_frame_locals(PyObject *mapping, bool keep) noexcept {
  if (!is_frame_locals(mapping)) return;
  FrameLocalsObject *m = as_fl(mapping);
  const NativeLink *link = m->link;
  if (!link) return;
  if (!keep) m->link = nullptr;
  if (!keep && !m->names) return;
  Py_INCREF(mapping);  // the reifier, or a value's release, may drop the frame object holding it
  PyObject *exc = compat::take_raised_exception();
  forget_whole_read(m);
  if (keep) {
    PyObject *d = read_locals(link->executable, link->state, link);
    if (!d) PyErr_WriteUnraisable(nullptr);  // not the mapping: its repr would read again
    m->link = nullptr;
    Py_XSETREF(m->kept, d);
  }
  if (exc) compat::restore_raised_exception(exc);
  Py_DECREF(mapping);
}

namespace {
// Appends the entry of a link that has none, frame_entries_lock held. 0, or -1: no memory.
int append_entry(NativeLink *link, LocalsReifier fn, void *context) noexcept {
  try {
    frame_entries.push_back({link, fn, context, this_thread()});
  } catch (const std::exception &) {  // out of memory; never the forced unwind
    return -1;
  }
  any_locals = true;
  return 0;
}
}  // namespace

int set_frame_locals(NativeLink *link, VisibleSlot *slot, LocalsReifier fn,
                     void *context) noexcept {
  if (!link) return -1;
  (void)slot;  // the visible frame's mapping: attached by api_set_frame_locals
  std::lock_guard<SpinLock> hold(frame_entries_lock);
  for (auto it = frame_entries.rbegin(); it != frame_entries.rend(); ++it)
    if (it->link == link) {
      if (fn) {
        it->fn = fn;
        it->context = context;
      } else {
        frame_entries.erase(std::next(it).base());
      }
      return 0;
    }
  if (!fn) return 0;
  return append_entry(link, fn, context);
}

int add_frame_locals(NativeLink *link, LocalsReifier fn, void *context) noexcept {
  if (!link || !fn) return -1;
  std::lock_guard<SpinLock> hold(frame_entries_lock);
  return append_entry(link, fn, context);
}

}  // namespace callsite::native
