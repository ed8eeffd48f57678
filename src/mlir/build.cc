// mlir/build.cc — ir.Location construction via Location.file/.name/.callsite/.unknown.
#include "mlir/build.h"

#include <exception>
#include <vector>

#include "core/compat.h"
#include "mlir/bindings.h"
#include "mlir/build_capi.h"
#include "render/mlir_text.h"
#include "symbolize/symbolize.h"

namespace callsite::mlir {
namespace {

PyObject *kw_context = nullptr;        // ("context",)
PyObject *kw_child_context = nullptr;  // ("childLoc", "context")
PyObject *str_name_str = nullptr, *str_child_loc = nullptr, *str_is_a_name = nullptr;

inline PyObject *call(PyObject *f, PyObject *const *args, std::size_t n, PyObject *kwnames) {
  return PyObject_Vectorcall(f, args, n, kwnames);
}

PyObject *build_frame(ContextCache &cc, const RawFrame &frame) {
  FrameInfo info;
  if (!symbolize(frame, &info)) return nullptr;
  // The strings are borrowed from caches (the reifier's, the code object's) and the calls below
  // run Python code, which may clear those caches: hold them.
  PyObject *name = Py_XNewRef(compat::mlir_frame_name(info));
  PyObject *filename = Py_XNewRef(info.filename);
  // 3.11+: PyCode_Addr2Location's values go to mlirLocationFileLineColRangeGet as they are
  // (a native frame's unknown positions as render/mlir_text.h says); 3.10: FileLineColLoc(file,
  // PyFrame_GetLineNumber, 0). The same values as Traceback.to_mlir() prints.
  const MlirPositions p = mlir_positions(info);
  constexpr std::size_t kNums = compat::kHasColumns ? 4 : 2;
  PyObject *nums[4] = {PyLong_FromLong(p.line),
                       PyLong_FromLong(compat::kHasColumns ? p.col : 0),
                       compat::kHasColumns ? PyLong_FromLong(p.end_line) : nullptr,
                       compat::kHasColumns ? PyLong_FromLong(p.end_col) : nullptr};
  PyObject *file = nullptr;
  bool ok = name && filename;
  for (std::size_t i = 0; i < kNums; ++i) ok = ok && nums[i];
  if (ok) {
    PyObject *args[2 + kNums];
    args[0] = filename;
    for (std::size_t i = 0; i < kNums; ++i) args[1 + i] = nums[i];
    args[1 + kNums] = cc.context;
    file = call(cc.bindings->loc_file, args, 1 + kNums, kw_context);
  }
  for (PyObject *n : nums) Py_XDECREF(n);
  Py_XDECREF(filename);
  PyObject *loc = nullptr;
  if (file) {
    PyObject *args[3] = {name, file, cc.context};
    loc = call(cc.bindings->loc_name, args, 1, kw_child_context);
    Py_DECREF(file);
  }
  Py_XDECREF(name);
  return loc;
}

// `loc` as a NameLoc object (new reference), or nullptr without an error when it is not one.
PyObject *as_nameloc(BindingsObject *b, PyObject *loc) {
  if (b->nameloc_type) {
    auto *type = reinterpret_cast<PyTypeObject *>(b->nameloc_type);
    if (PyObject_TypeCheck(loc, type)) return Py_NewRef(loc);
    if (!Py_IS_TYPE(loc, reinterpret_cast<PyTypeObject *>(b->location_type))) return nullptr;
    // A plain ir.Location may hold a NameLoc (one made by Location._CAPICreate, an op's
    // location): the typed class casts it, and raises when it is not one. MLIR's own
    // NAMELOC_WRAP asks mlirLocationIsAName, whatever the Python class.
    PyObject *cast = PyObject_CallOneArg(b->nameloc_type, loc);
    if (!cast) PyErr_Clear();
    return cast;
  }
  PyObject *r = PyObject_CallMethodNoArgs(loc, str_is_a_name);  // untyped older bindings
  if (!r) {
    PyErr_Clear();
    return nullptr;
  }
  const bool yes = PyObject_IsTrue(r) == 1;
  Py_DECREF(r);
  return yes ? Py_NewRef(loc) : nullptr;
}

}  // namespace

PyObject *frame_location(ContextCache &cc, const RawFrame &frame) {
  if (PyObject *hit = cc.find_frame(frame)) return hit;
  PyObject *loc = build_frame(cc, frame);
  return loc ? cc.store_frame(frame, loc) : nullptr;
}

PyObject *unknown_location(ContextCache &cc) {
  if (!cc.unknown()) {
    PyObject *args[1] = {cc.context};
    PyObject *loc = call(cc.bindings->loc_unknown, args, 0, kw_context);
    if (!loc) return nullptr;
    cc.store_unknown(loc);
  }
  return cc.unknown();
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
  if (cc.mlir_context) return nameloc_wrap_capi(cc, current, inner, own_inner);
  if (PyObject *hit = cc.find_wrap(current, inner)) return hit;

  std::vector<PyObject *> names;  // outermost first, as Location.current nests them
  for (PyObject *cur = as_nameloc(cc.bindings, current); cur;) {
    PyObject *name = PyObject_GetAttr(cur, str_name_str);
    PyObject *child = name ? PyObject_GetAttr(cur, str_child_loc) : nullptr;
    Py_DECREF(cur);
    if (!child) {
      Py_XDECREF(name);
      for (PyObject *n : names) Py_DECREF(n);
      return nullptr;
    }
    names.push_back(name);
    cur = as_nameloc(cc.bindings, child);
    Py_DECREF(child);
  }
  PyObject *loc = Py_NewRef(inner);
  for (auto it = names.rbegin(); it != names.rend() && loc; ++it) {
    PyObject *args[3] = {*it, loc, cc.context};
    PyObject *next = call(cc.bindings->loc_name, args, 1, kw_child_context);
    Py_DECREF(loc);
    loc = next;
  }
  for (PyObject *n : names) Py_DECREF(n);
  if (!loc) return nullptr;
  // The tables are looked up again inside: building called into the bindings.
  return cc.store_wrap(current, inner, loc, own_inner);
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
