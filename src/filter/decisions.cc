// filter/decisions.cc — filter decisions cached per code object, and the filter API.
#include <vector>

#include "capture/traceback_storage.h"
#include "core/frame_refs.h"
#include "filter/filter.h"
#include "filter/decisions.h"
#include "symbolize/symbolize.h"

namespace callsite::detail {

PyTypeObject *filter_type = nullptr;

std::uint64_t next_filter_generation() noexcept {
  static std::uint64_t counter = 0;  // GIL held: no atomics needed
  return ++counter;
}

namespace {
// Generated code (JITs, templates, exec) can bring an endless stream of distinct file names
// to a long-lived Filter: past this many, the cache starts over (a few hundred kB at most).
constexpr Py_ssize_t kMaxCachedFilenames = 4096;
}  // namespace

// Python code runs inside (the rules' regular expressions allocate, so a collection may run
// finalizers; a str subclass's __hash__/__eq__): it may edit the rules, drop the last reference
// to the Filter or to the code object. So the Filter and the names are held across, and a
// decision is cached only under the generation it was made for.
int keeps(FilterObject *f, PyObject *filename) {
  if (f->rules->empty()) return 1;
  PyObject *self = reinterpret_cast<PyObject *>(f);
  Py_INCREF(self);
  // The cache's keys are exact str: a subclass's __hash__/__eq__ would run user code inside the
  // dict, and PyDict_Clear of a rule change would run its finalizer.
  PyObject *name = PyUnicode_CheckExact(filename) ? Py_NewRef(filename) : PyUnicode_FromObject(filename);
  const std::uint64_t generation = f->generation;
  int keep = -1;
  if (name) {
    if (PyObject *hit = PyDict_GetItemWithError(f->filename_cache, name)) {
      keep = hit == Py_True;
    } else if (!PyErr_Occurred()) {
      keep = f->rules->keeps(name);
      if (keep >= 0 && f->generation == generation) {
        if (PyDict_GET_SIZE(f->filename_cache) >= kMaxCachedFilenames) PyDict_Clear(f->filename_cache);
        if (PyDict_SetItem(f->filename_cache, name, keep ? Py_True : Py_False) < 0) keep = -1;
      }
    }
    Py_DECREF(name);
  }
  Py_DECREF(self);
  return keep;
}

int keeps_uncached(FilterObject *f, PyCodeObject *code, CodeInfo *info) {
  // The decision is recorded for the generation it was made under (the rules may change while
  // they run); the code object, which owns `info`, is held across.
  const std::uint64_t generation = f->generation;
  Py_INCREF(code);
  const int keep = keeps(f, code->co_filename);
  if (keep >= 0 && info) {
    if (!info->extension) info->extension.reset(new (std::nothrow) FilterDecisions());
    if (info->extension) {
      auto *d = static_cast<FilterDecisions *>(info->extension.get());
      auto &slot = d->slots[d->next++ % FilterDecisions::kSlots];
      slot.generation = generation;
      slot.keep = keep != 0;
    }
  }
  Py_DECREF(code);
  return keep;
}

int keeps_uncached(FilterObject *f, const RawFrame &frame) {
  FrameInfo info;
  if (!symbolize(frame, &info)) return -1;
  return info.filename && PyUnicode_Check(info.filename) ? keeps(f, info.filename) : 1;
}

std::size_t keep_frames(PyObject *filter, const RawFrame *frames, std::size_t n, RawFrame *out,
                        std::size_t limit, WalkEnd end) {
  FilterObject *f = as_filter(filter);
  // Each decision may run Python code (reifiers, the rules), which may drop the caller's
  // reference to the Filter: held for the whole loop.
  Py_INCREF(filter);
  std::size_t written = 0;
  // The boundary frame is kept last whatever the rules say: the frames above it share the
  // rest of the limit.
  const bool keep_last = end == WalkEnd::at_boundary && n > 0 && limit > 0;
  const std::size_t kept = keep_first(
      n - std::size_t(keep_last), limit - std::size_t(keep_last),
      [&](std::size_t i) { return keeps(f, frames[i]); },
      [&](std::size_t i) {
        out[written++] = frames[i];
        return true;
      });
  Py_DECREF(filter);
  if (kept == SIZE_MAX || !keep_last) return kept;
  out[written] = frames[n - 1];
  return kept + 1;
}

namespace {

FilterObject *checked(PyObject *filter) {
  if (filter && is_filter_object(filter)) return as_filter(filter);
  PyErr_Format(PyExc_TypeError, "filter must be a callsite.Filter or None, not %.200s",
               filter ? Py_TYPE(filter)->tp_name : "NULL");
  return nullptr;
}

}  // namespace
}  // namespace callsite::detail

namespace callsite {

bool is_filter(PyObject *obj) noexcept { return detail::is_filter_object(obj); }

int filter_keeps(PyObject *filter, PyCodeObject *code) {
  detail::FilterObject *f = detail::checked(filter);
  if (!f) return -1;
  return detail::keeps(f, code, detail::code_info(code));
}

std::size_t filter_frames(PyObject *filter, const RawFrame *frames, std::size_t n,
                          RawFrame *out, std::size_t limit, WalkEnd end) {
  const std::size_t resolved = filter_limit(filter, limit);
  if (resolved == SIZE_MAX && PyErr_Occurred()) return SIZE_MAX;
  return detail::keep_frames(filter, frames, n, out, resolved, end);
}

}  // namespace callsite

namespace callsite {

namespace {

// The native entries of frames[0..n) retained for a scope. Deciding on a native frame runs its
// reifier, which may pop the native frames of a walk and free their executables: the entries
// must stay valid until the Traceback holds its own references. Python entries need nothing
// (their code objects belong to running frames, a Traceback or a window copy).
class NativeEntriesHeld {
 public:
  NativeEntriesHeld(const RawFrame *frames, std::size_t n) noexcept : frames_(frames), n_(n) {
    for (std::size_t i = 0; i < n_; ++i)
      if (!frames_[i].is_python()) detail::retain(frames_[i]);
  }
  ~NativeEntriesHeld() {
    for (std::size_t i = 0; i < n_; ++i)
      if (!frames_[i].is_python()) detail::release(frames_[i]);
  }
  NativeEntriesHeld(const NativeEntriesHeld &) = delete;
  NativeEntriesHeld &operator=(const NativeEntriesHeld &) = delete;

 private:
  const RawFrame *frames_;
  std::size_t n_;
};

}  // namespace

PyObject *filtered_traceback(PyObject *filter, const RawFrame *frames, std::size_t n,
                             std::size_t limit, WalkEnd end) {
  std::vector<RawFrame> kept(n < limit ? n : limit);
  NativeEntriesHeld held(frames, n);
  const std::size_t k = filter_frames(filter, frames, n, kept.data(), limit, end);
  if (k == SIZE_MAX) return nullptr;
  PyObject *tb = new_traceback(kept.data(), k);
  if (tb && end == WalkEnd::at_boundary && k) detail::set_end(tb, end);
  return tb;
}

std::size_t filter_limit(PyObject *filter, std::size_t limit) noexcept {
  detail::FilterObject *f = detail::checked(filter);
  if (!f) return SIZE_MAX;
  return f->limit < limit ? f->limit : limit;
}

std::uint64_t filter_generation(PyObject *filter) noexcept {
  detail::FilterObject *f = detail::checked(filter);
  return f ? f->generation : 0;
}

}  // namespace callsite
