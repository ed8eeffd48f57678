// mlir/build.cc — ir.Location construction via Location.file/.name/.callsite/.unknown.
#include "mlir/build.h"

#include <exception>
#include <vector>

#include "core/compat.h"
#include "core/frame_refs.h"
#include "symbolize/symbolize.h"

namespace callsite::mlir {
namespace {

constexpr std::size_t kMaxWrapGroups = 1024;

PyObject *kw_context = nullptr;        // ("context",)
PyObject *kw_child_context = nullptr;  // ("childLoc", "context")
PyObject *str_name_str = nullptr, *str_child_loc = nullptr, *str_is_a_name = nullptr;

inline PyObject *call(PyObject *f, PyObject *const *args, std::size_t n, PyObject *kwnames) {
  return PyObject_Vectorcall(f, args, n, kwnames);
}

PyObject *build_frame(ContextCache &cc, const RawFrame &frame) {
  FrameInfo info;
  if (!symbolize(frame, &info)) return nullptr;
  PyObject *name = compat::mlir_frame_name(info);
  // 3.11+: PyCode_Addr2Location's values go to mlirLocationFileLineColRangeGet as they are;
  // 3.10: FileLineColLoc(file, PyFrame_GetLineNumber, 0).
  constexpr std::size_t kNums = compat::kHasColumns ? 4 : 2;
  PyObject *nums[4] = {PyLong_FromLong(info.lineno),
                       PyLong_FromLong(compat::kHasColumns ? info.colno : 0),
                       compat::kHasColumns ? PyLong_FromLong(info.end_lineno) : nullptr,
                       compat::kHasColumns ? PyLong_FromLong(info.end_colno) : nullptr};
  PyObject *file = nullptr;
  bool ok = true;
  for (std::size_t i = 0; i < kNums; ++i) ok = ok && nums[i];
  if (ok) {
    PyObject *args[2 + kNums];
    args[0] = info.filename;
    for (std::size_t i = 0; i < kNums; ++i) args[1 + i] = nums[i];
    args[1 + kNums] = cc.context;
    file = call(cc.bindings->loc_file, args, 1 + kNums, kw_context);
  }
  for (PyObject *n : nums) Py_XDECREF(n);
  if (!file) return nullptr;
  PyObject *args[3] = {name, file, cc.context};
  PyObject *loc = call(cc.bindings->loc_name, args, 1, kw_child_context);
  Py_DECREF(file);
  return loc;
}

bool is_nameloc(BindingsObject *b, PyObject *loc) {
  if (b->nameloc_type) return PyObject_TypeCheck(loc, reinterpret_cast<PyTypeObject *>(b->nameloc_type));
  PyObject *r = PyObject_CallMethodNoArgs(loc, str_is_a_name);  // untyped older bindings
  if (!r) {
    PyErr_Clear();
    return false;
  }
  const bool yes = PyObject_IsTrue(r) == 1;
  Py_DECREF(r);
  return yes;
}

}  // namespace

PyObject *frame_location(ContextCache &cc, const RawFrame &frame) {
  auto it = cc.frames.find(frame);
  if (it != cc.frames.end()) return it->second;
  PyObject *loc = build_frame(cc, frame);
  if (!loc) return nullptr;
  try {
    cc.frames.emplace(frame, own(cc, loc));
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    --cc.held;
    Py_DECREF(loc);
    PyErr_NoMemory();
    return nullptr;
  }
  detail::retain(frame);  // the key's reference, released with the cache
  return loc;
}

PyObject *unknown_location(ContextCache &cc) {
  if (!cc.unknown) {
    PyObject *args[1] = {cc.context};
    PyObject *loc = call(cc.bindings->loc_unknown, args, 0, kw_context);
    if (!loc) return nullptr;
    cc.unknown = own(cc, loc);
  }
  return cc.unknown;
}

PyObject *callsite_location(ContextCache &cc, PyObject *callee, PyObject *caller) {
  PyObject *callers = PyList_New(1);
  if (!callers) return nullptr;
  PyList_SET_ITEM(callers, 0, Py_NewRef(caller));
  PyObject *args[3] = {callee, callers, cc.context};
  PyObject *loc = call(cc.bindings->loc_callsite, args, 2, kw_context);
  Py_DECREF(callers);
  return loc;
}

PyObject *nameloc_wrap(ContextCache &cc, PyObject *current, PyObject *inner,
                       bool own_inner) {
  auto group = cc.wraps.find(current);
  if (group != cc.wraps.end()) {
    auto hit = group->second.by_inner.find(inner);
    if (hit != group->second.by_inner.end()) return hit->second.wrapped;
  }

  std::vector<PyObject *> names;  // outermost first, as Location.current nests them
  PyObject *cur = Py_NewRef(current);
  while (is_nameloc(cc.bindings, cur)) {
    PyObject *name = PyObject_GetAttr(cur, str_name_str);
    PyObject *child = name ? PyObject_GetAttr(cur, str_child_loc) : nullptr;
    Py_DECREF(cur);
    if (!child) {
      Py_XDECREF(name);
      for (PyObject *n : names) Py_DECREF(n);
      return nullptr;
    }
    names.push_back(name);
    cur = child;
  }
  Py_DECREF(cur);
  PyObject *loc = Py_NewRef(inner);
  for (auto it = names.rbegin(); it != names.rend() && loc; ++it) {
    PyObject *args[3] = {*it, loc, cc.context};
    PyObject *next = call(cc.bindings->loc_name, args, 1, kw_child_context);
    Py_DECREF(loc);
    loc = next;
  }
  for (PyObject *n : names) Py_DECREF(n);
  if (!loc) return nullptr;
  group = cc.wraps.find(current);  // again: building called into the bindings
  // Every `with ir.Location.name(...)` is a new current location: bound the groups.
  if (group == cc.wraps.end() && cc.wraps.size() >= kMaxWrapGroups) cc.clear_wraps();
  try {
    if (group == cc.wraps.end()) {
      group = cc.wraps.emplace(current, ContextCache::WrapGroup{current, {}}).first;
      Py_INCREF(own(cc, current));
    }
    group->second.by_inner.emplace(inner, ContextCache::Wrapped{own(cc, loc), own_inner});
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    Py_DECREF(loc);
    PyErr_NoMemory();
    return nullptr;
  }
  if (own_inner) Py_INCREF(own(cc, inner));
  return loc;
}

bool init_build() noexcept {
  if (kw_context) return true;
  kw_context = Py_BuildValue("(s)", "context");
  kw_child_context = Py_BuildValue("(ss)", "childLoc", "context");
  str_name_str = PyUnicode_InternFromString("name_str");
  str_child_loc = PyUnicode_InternFromString("child_loc");
  str_is_a_name = PyUnicode_InternFromString("is_a_name");
  return kw_context && kw_child_context && str_name_str && str_child_loc && str_is_a_name;
}

}  // namespace callsite::mlir
