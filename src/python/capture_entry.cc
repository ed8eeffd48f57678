// python/capture_entry.cc — callsite.capture(): arguments, then the walk (capture/), the
// tracked window (tracking/) or a filtered walk (filter/).
#include "python/capture_entry.h"

#include "capture/capture.h"
#include "core/args.h"
#include "filter/decisions.h"
#include "filter/filter.h"
#include "filter/scan_kept.h"
#include "tracking/tracking.h"

namespace callsite::detail {
namespace {

// Positional-or-keyword: skip, limit; keyword-only: filter, source.
constexpr const char *kNames[] = {"skip", "limit", "filter", "source"};
constexpr Py_ssize_t kPositional = 2, kAll = 4;

}  // namespace

PyObject *capture_py(PyObject *, PyObject *const *args, Py_ssize_t nargs,
                     PyObject *kwnames) {
  if (nargs == 0 && !kwnames) return callsite::capture(0, SIZE_MAX);  // the common call

  PyObject *slots[kAll] = {nullptr, nullptr, nullptr, nullptr};
  if (!bind_fastcall_args("capture", kNames, kAll, kPositional, args, nargs, kwnames, slots))
    return nullptr;
  size_t skip = 0, limit = SIZE_MAX;
  if (slots[0] && !parse_count(slots[0], "skip", 0, &skip)) return nullptr;
  if (slots[1] && !parse_count(slots[1], "limit", SIZE_MAX, &limit)) return nullptr;
  PyObject *filter = slots[2] == Py_None ? nullptr : slots[2];

  bool window = false;
  if (PyObject *source = slots[3]; source && source != Py_None) {
    if (!PyUnicode_Check(source)) {
      PyErr_Format(PyExc_TypeError, "source must be 'walk' or 'window', not %.200s",
                   Py_TYPE(source)->tp_name);
      return nullptr;
    }
    window = PyUnicode_CompareWithASCIIString(source, "window") == 0;
    if (!window && PyUnicode_CompareWithASCIIString(source, "walk") != 0) {
      PyErr_Format(PyExc_ValueError, "source must be 'walk' or 'window', not %R", source);
      return nullptr;
    }
  }
  if (window) return tracking::window_traceback(skip, limit, filter);
  if (!filter) return callsite::capture(skip, limit);

  // Filtered: the limit counts kept frames. With a limit, walk growing prefixes of the stack
  // and stop at the one holding `wanted` kept frames (limit=1: the first user frame). Inside a
  // kernel boundary the limit leaves room for the kernel's frame: the walk goes to it (it
  // bounds the walk).
  const size_t wanted = filter_limit(filter, limit);
  if (wanted == SIZE_MAX && PyErr_Occurred()) return nullptr;
  StackWalk stack(skip, wanted == SIZE_MAX ? kStackBuffer : kFirstPrefix);
  if (wanted == SIZE_MAX || stack.bounded()) {
    stack.walk_all();
  } else {
    size_t kept = 0;
    if (scan_kept(stack, as_filter(filter), wanted, &kept) == SIZE_MAX) return nullptr;
  }
  return filtered_traceback(filter, stack.data(), stack.size(), wanted, stack.end());
}

}  // namespace callsite::detail
