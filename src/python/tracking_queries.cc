// python/tracking_queries.cc — callsite.tracking.window() / last() and the CallSite type:
// the window read as Python objects, through a Filter.
#include "python/tracking_queries.h"

#include "core/args.h"
#include "core/frame_refs.h"
#include "filter/filter.h"
#include "python/frame_type.h"
#include "tracking/modes.h"
#include "tracking/query.h"

namespace callsite::tracking::detail {

PyTypeObject *call_site_type = nullptr;

namespace {

PyStructSequence_Field call_site_fields[] = {
    {"code", "the caller's code object"},
    {"offset", "instruction offset (bytes) of the call in the caller, as frame.f_lasti"},
    {"callee", "the callee's code object, or None (C callables, types)"},
    {"site", "the call site as a callsite.Frame (filename, lineno, colno, ...)"},
    {nullptr, nullptr}};

PyStructSequence_Desc call_site_desc = {
    "callsite.tracking.CallSite",
    "One recorded call: where it was made (code, offset, site) and what it called (callee).\n\n"
    R"doc(Example:
    ::

        import callsite.tracking as tracking

        def f():
            return tracking.window(limit=1)[0]

        with tracking.enable():
            call = f()
        print(call.code.co_name, call.site.lineno)          # f 5: the call of window() in f
)doc",
    call_site_fields, 4};

PyObject *new_call_site(const OwnedCallSite &e) {
  PyObject *item = PyStructSequence_New(call_site_type);
  if (!item) return nullptr;
  PyObject *site = callsite::detail::new_frame(callsite::detail::python_raw_frame(e.code, e.offset));
  PyObject *offset = PyLong_FromSsize_t(e.offset);
  if (!site || !offset) {
    Py_XDECREF(site);
    Py_XDECREF(offset);
    Py_DECREF(item);
    return nullptr;
  }
  PyStructSequence_SetItem(item, 0, Py_NewRef(reinterpret_cast<PyObject *>(e.code)));
  PyStructSequence_SetItem(item, 1, offset);
  PyStructSequence_SetItem(item, 2, Py_NewRef(e.callee ? reinterpret_cast<PyObject *>(e.callee)
                                                       : Py_None));
  PyStructSequence_SetItem(item, 3, site);
  return item;
}

PyObject *as_call_sites(const OwnedCallSite *entries, std::size_t n, std::size_t limit,
                        PyObject *filter) {
  if (filter) {
    const std::size_t own = filter_limit(filter);
    if (own == SIZE_MAX && PyErr_Occurred()) return nullptr;
    if (own < limit) limit = own;
  }
  PyObject *list = PyList_New(0);
  if (!list) return nullptr;
  const std::size_t kept = keep_first(
      n, limit,
      [&](std::size_t i) { return filter ? filter_keeps(filter, entries[i].code) : 1; },
      [&](std::size_t i) {
        PyObject *item = new_call_site(entries[i]);
        const bool ok = item && PyList_Append(list, item) == 0;
        Py_XDECREF(item);
        return ok;
      });
  if (kept == SIZE_MAX) Py_CLEAR(list);
  return list;
}

// skip, limit positional-or-keyword; filter keyword-only (as capture()).
constexpr const char *kNames[] = {"skip", "limit", "filter"};

}  // namespace

bool init_call_site_type() noexcept {
  if (!call_site_type) call_site_type = PyStructSequence_NewType(&call_site_desc);
  return call_site_type != nullptr;
}

PyObject *window_py(PyObject *, PyObject *const *args, Py_ssize_t nargs,
                    PyObject *kwnames) {
  PyObject *slots[3] = {nullptr, nullptr, nullptr};
  if (!callsite::detail::bind_fastcall_args("window", kNames, 3, 2, args, nargs, kwnames, slots))
    return nullptr;
  size_t skip = 0, limit = SIZE_MAX;
  if (slots[0] && !callsite::detail::parse_count(slots[0], "skip", 0, &skip)) return nullptr;
  if (slots[1] && !callsite::detail::parse_count(slots[1], "limit", SIZE_MAX, &limit)) return nullptr;
  PyObject *filter = slots[2] == Py_None ? nullptr : slots[2];
  Window *r = window_for_query("callsite.tracking.window()");
  if (!r) return nullptr;
  return with_copy(r, skip, filter ? SIZE_MAX : limit, [&](const OwnedCallSite *e, std::size_t n) {
    return as_call_sites(e, n, limit, filter);
  });
}

PyObject *last_py(PyObject *, PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
  // The errors name the public function: the builtin's own would name the private module.
  if (kwnames && PyTuple_GET_SIZE(kwnames)) {
    PyErr_Format(PyExc_TypeError,
                 "callsite.tracking.last() takes no keyword arguments (filter is positional: "
                 "last(filter)), got %R",
                 PyTuple_GET_ITEM(kwnames, 0));
    return nullptr;
  }
  if (nargs > 1) {
    PyErr_Format(PyExc_TypeError, "callsite.tracking.last() takes at most 1 argument (%zd given)",
                 nargs);
    return nullptr;
  }
  PyObject *filter = nargs == 1 && args[0] != Py_None ? args[0] : nullptr;
  Window *r = window_for_query("callsite.tracking.last()");
  if (!r) return nullptr;
  // A filter's decision may allocate, and so run code (a GC's finalizers) that records calls,
  // resizes or clears the window, or disables tracking (which drops it): hold the window, copy
  // the entry and hold its code object while deciding and building the Frame.
  Py_INCREF(r);
  PyObject *found = nullptr;
  bool failed = false;
  for (std::uint32_t i = 0; i < r->count && !found && !failed; ++i) {
    const OwnedCallSite &e = r->entries[(r->head + r->capacity - 1 - i) % r->capacity];
    PyCodeObject *code = e.code;
    const std::intptr_t offset = e.offset;
    Py_INCREF(code);
    const int keep = filter ? filter_keeps(filter, code) : 1;
    if (keep < 0)
      failed = true;
    else if (keep)
      found = callsite::detail::new_frame(callsite::detail::python_raw_frame(code, offset));
    failed = failed || (keep && !found);
    Py_DECREF(code);
  }
  Py_DECREF(r);
  if (failed) return nullptr;
  if (found) return found;
  if (filter && filter_limit(filter) == SIZE_MAX && PyErr_Occurred()) return nullptr;
  Py_RETURN_NONE;
}

}  // namespace callsite::tracking::detail
