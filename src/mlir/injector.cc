// mlir/injector.cc — op-builder wrappers: vectorcall objects that find loc= and, when
// auto_locations is on for the calling thread/task, supply the captured location.
//
// They wrap the one choke point every generated op class goes through (OpView.__init__, which
// the `_<dialect>_ops_gen.py` builders reach by super().__init__(..., loc=loc)) plus
// Operation.create and OpView.build_generic: the same points where MLIR's own
// maybeGetTracebackLocation runs, so the stack they see is the stack MLIR sees.
#include "mlir/injector.h"

#include <structmember.h>

#include <vector>

#include "filter/decisions.h"
#include "mlir/bindings.h"
#include "mlir/context_cache.h"
#include "mlir/locate.h"
#include "mlir/settings.h"

namespace callsite::mlir {
namespace {

PyTypeObject *method_type = nullptr, *function_type = nullptr;
PyObject *str_loc = nullptr, *kw_only_loc = nullptr, *str_context = nullptr;

struct InjectorObject {
  PyObject_HEAD
  vectorcallfunc vectorcall;
  PyObject *original;
  BindingsObject *bindings;
  InjectorKind kind;
  Py_ssize_t loc_position;  // loc= passed by position: args[loc_position] (-1: never)
  // kwnames → kwnames + ("loc",): kwnames tuples are code constants, so a few slots suffice.
  static constexpr int kKw = 4;
  PyObject *kw_from[kKw], *kw_to[kKw];
  unsigned kw_next;
};

inline InjectorObject *as_inj(PyObject *o) { return reinterpret_cast<InjectorObject *>(o); }

Py_ssize_t find_loc(PyObject *kwnames) {
  if (!kwnames) return -1;
  const Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < n; ++i) {
    PyObject *key = PyTuple_GET_ITEM(kwnames, i);
    if (key == str_loc) return i;
  }
  for (Py_ssize_t i = 0; i < n; ++i) {  // not interned (e.g. built by **kwargs)
    PyObject *key = PyTuple_GET_ITEM(kwnames, i);
    if (PyUnicode_GET_LENGTH(key) == 3 && PyUnicode_Compare(key, str_loc) == 0) return i;
  }
  return -1;
}

PyObject *extended_kwnames(InjectorObject *self, PyObject *kwnames) {
  if (!kwnames) return Py_NewRef(kw_only_loc);
  for (int i = 0; i < InjectorObject::kKw; ++i)
    if (self->kw_from[i] == kwnames) return Py_NewRef(self->kw_to[i]);
  const Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  PyObject *ext = PyTuple_New(n + 1);
  if (!ext) return nullptr;
  for (Py_ssize_t i = 0; i < n; ++i) PyTuple_SET_ITEM(ext, i, Py_NewRef(PyTuple_GET_ITEM(kwnames, i)));
  PyTuple_SET_ITEM(ext, n, Py_NewRef(str_loc));
  const unsigned slot = self->kw_next++ % InjectorObject::kKw;
  Py_XSETREF(self->kw_from[slot], Py_NewRef(kwnames));
  Py_XSETREF(self->kw_to[slot], Py_NewRef(ext));
  return ext;
}

// Calls the original with loc= set to `loc`: replacing the loc keyword at `loc_index`, else
// the positional loc at `loc_arg`, else appending a loc keyword.
PyObject *call_with_loc(InjectorObject *self, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames, Py_ssize_t loc_index, Py_ssize_t loc_arg,
                        PyObject *loc) {
  const Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  const bool replaces = loc_index >= 0 || loc_arg >= 0;
  const Py_ssize_t total = nargs + nkw + (replaces ? 0 : 1);
  PyObject *small[16];
  std::vector<PyObject *> big;
  PyObject **buf = small;
  if (total > 16) {
    big.resize(size_t(total));
    buf = big.data();
  }
  for (Py_ssize_t i = 0; i < nargs + nkw; ++i) buf[i] = args[i];
  if (replaces) {
    buf[loc_index >= 0 ? nargs + loc_index : loc_arg] = loc;
    return PyObject_Vectorcall(self->original, buf, size_t(nargs), kwnames);
  }
  buf[nargs + nkw] = loc;
  PyObject *ext = extended_kwnames(self, kwnames);
  if (!ext) return nullptr;
  PyObject *r = PyObject_Vectorcall(self->original, buf, size_t(nargs), ext);
  Py_DECREF(ext);
  return r;
}

PyObject *injector_call(PyObject *op, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
  InjectorObject *self = as_inj(op);
  SettingsObject *settings = nullptr;
  if (current_settings(&settings) < 0) return nullptr;
  if (!settings && self->bindings->process_settings)  // no scope here: MLIR's process switch
    settings = reinterpret_cast<SettingsObject *>(Py_NewRef(self->bindings->process_settings));
  if (!settings) return PyObject_Vectorcall(self->original, args, nargsf, kwnames);  // off here

  const Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  const Py_ssize_t loc_index = find_loc(kwnames);
  const Py_ssize_t loc_arg =
      loc_index < 0 && self->loc_position >= 0 && nargs > self->loc_position ? self->loc_position
                                                                               : -1;
  // OpView.__init__(self, operation) wraps an existing op: only (self, name, ...) builds one.
  const bool builds = self->kind == InjectorKind::builder || loc_index >= 0 ||
                      (nargs >= 2 && PyUnicode_Check(args[1]));
  PyObject *explicit_loc = loc_index >= 0 ? args[nargs + loc_index]
                           : loc_arg >= 0 ? args[loc_arg]
                                          : nullptr;
  if (explicit_loc == Py_None) explicit_loc = nullptr;
  if (!builds || (explicit_loc && !settings->use_traceback && !settings->nameloc_wrap)) {
    Py_DECREF(settings);
    return PyObject_Vectorcall(self->original, args, nargsf, kwnames);
  }

  PyObject *result = nullptr, *ctx = current_context(self->bindings);
  if (!ctx && explicit_loc && !PyErr_Occurred()) {
    // No current context, but an explicit location (`Module.create(Location.unknown(ctx))`
    // with use_traceback): its context is the op's. MLIR's own walk raises here instead; a
    // documented difference (docs/mlir.md).
    ctx = PyObject_GetAttr(explicit_loc, str_context);
    if (ctx && !PyObject_TypeCheck(ctx, reinterpret_cast<PyTypeObject *>(
                                            self->bindings->context_type)))
      Py_CLEAR(ctx);
    if (!ctx) PyErr_Clear();
  }
  if (!ctx) {  // no context at all: let MLIR report it in its own words
    Py_DECREF(settings);
    if (PyErr_Occurred()) return nullptr;
    return PyObject_Vectorcall(self->original, args, nargsf, kwnames);
  }
  ContextCache *cc = cache_for(self->bindings, ctx);
  CacheHold hold(cc);  // building runs Python code, which may drop the cache
  PyObject *loc = nullptr;  // a new reference from here on
  bool ours = false;
  if (cc) {
    if (explicit_loc && !settings->use_traceback) {
      loc = Py_NewRef(explicit_loc);  // on_explicit=use_explicit, but still wrapped (as MLIR)
    } else {
      loc = settings->window ? window_location(*cc, settings->filter, settings->limit)
                             : stack_location(*cc, settings->filter, settings->limit, 0);
      ours = true;
    }
  }
  if (loc && settings->nameloc_wrap) {
    PyObject *current = current_location(self->bindings);
    if (current) {
      PyObject *wrapped = Py_XNewRef(cc->builder->nameloc_wrap(current, loc, !ours));
      Py_DECREF(current);
      Py_SETREF(loc, wrapped);
    } else if (PyErr_Occurred()) {
      Py_CLEAR(loc);
    }
  }
  if (loc) {  // held across the call: it may run anything, including a cache sweep
    result = call_with_loc(self, args, nargs, kwnames, loc_index, loc_arg, loc);
    Py_DECREF(loc);
  }
  Py_DECREF(ctx);
  Py_DECREF(settings);
  return result;
}

PyObject *injector_descr_get(PyObject *self, PyObject *obj, PyObject *) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

void injector_dealloc(PyObject *op) {
  InjectorObject *self = as_inj(op);
  Py_XDECREF(self->original);
  Py_XDECREF(reinterpret_cast<PyObject *>(self->bindings));
  for (int i = 0; i < InjectorObject::kKw; ++i) {
    Py_XDECREF(self->kw_from[i]);
    Py_XDECREF(self->kw_to[i]);
  }
  PyTypeObject *type = Py_TYPE(op);
  type->tp_free(op);
  Py_DECREF(type);
}

PyObject *get_wrapped(PyObject *op, void *) { return Py_NewRef(as_inj(op)->original); }
PyObject *get_doc(PyObject *op, void *) {
  return PyObject_GetAttrString(as_inj(op)->original, "__doc__");
}
PyObject *get_name(PyObject *op, void *) {
  return PyObject_GetAttrString(as_inj(op)->original, "__name__");
}

PyObject *injector_repr(PyObject *op) {
  return PyUnicode_FromFormat("<callsite.mlir location injector for %R>", as_inj(op)->original);
}

PyMemberDef injector_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(InjectorObject, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef injector_getset[] = {
    {"__wrapped__", get_wrapped, nullptr, "the original builder", nullptr},
    {"__doc__", get_doc, nullptr, nullptr, nullptr},
    {"__name__", get_name, nullptr, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot method_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void *>(injector_dealloc)},
    {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
    {Py_tp_descr_get, reinterpret_cast<void *>(injector_descr_get)},
    {Py_tp_repr, reinterpret_cast<void *>(injector_repr)},
    {Py_tp_members, injector_members},
    {Py_tp_getset, injector_getset},
    {0, nullptr}};
PyType_Slot function_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void *>(injector_dealloc)},
    {Py_tp_call, reinterpret_cast<void *>(PyVectorcall_Call)},
    {Py_tp_repr, reinterpret_cast<void *>(injector_repr)},
    {Py_tp_members, injector_members},
    {Py_tp_getset, injector_getset},
    {0, nullptr}};

// Py_TPFLAGS_METHOD_DESCRIPTOR: `obj.__init__(...)` / super().__init__(...) call us with self
// first instead of allocating a bound method (LOAD_METHOD, 3.12 LOAD_SUPER_ATTR).
PyType_Spec method_spec = {"callsite.mlir._MethodInjector", int(sizeof(InjectorObject)), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
                               Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                           method_slots};
PyType_Spec function_spec = {"callsite.mlir._FunctionInjector", int(sizeof(InjectorObject)), 0,
                             Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_VECTORCALL |
                                 Py_TPFLAGS_DISALLOW_INSTANTIATION,
                             function_slots};

}  // namespace

PyObject *new_injector(InjectorKind kind, PyObject *original, BindingsObject *bindings,
                       Py_ssize_t loc_position) noexcept {
  PyTypeObject *type = kind == InjectorKind::opview_init ? method_type : function_type;
  auto *self = reinterpret_cast<InjectorObject *>(type->tp_alloc(type, 0));
  if (!self) return nullptr;
  self->vectorcall = injector_call;
  self->original = Py_NewRef(original);
  self->bindings = reinterpret_cast<BindingsObject *>(Py_NewRef(reinterpret_cast<PyObject *>(bindings)));
  self->kind = kind;
  self->loc_position = loc_position;
  return reinterpret_cast<PyObject *>(self);
}

PyTypeObject *injector_type(bool method) noexcept { return method ? method_type : function_type; }

bool is_injector(PyObject *obj) noexcept {
  return Py_IS_TYPE(obj, method_type) || Py_IS_TYPE(obj, function_type);
}

bool init_injectors() noexcept {
  if (method_type) return true;
  str_loc = PyUnicode_InternFromString("loc");
  str_context = PyUnicode_InternFromString("context");
  kw_only_loc = str_loc ? PyTuple_Pack(1, str_loc) : nullptr;
  method_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&method_spec));
  function_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&function_spec));
  return kw_only_loc && str_context && method_type && function_type;
}

}  // namespace callsite::mlir
