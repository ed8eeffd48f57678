// mlir/settings.cc — the MlirSettings type and its ContextVar. Unlike MLIR's process-wide
// switch, a ContextVar gives each thread (and asyncio task) its own settings, nested by
// set()/reset() tokens.
#include "mlir/settings.h"

#include "core/args.h"
#include "filter/filter.h"

namespace callsite::mlir {

PyTypeObject *settings_type = nullptr;
PyObject *settings_var = nullptr;

namespace {

inline SettingsObject *as_settings(PyObject *o) { return reinterpret_cast<SettingsObject *>(o); }

PyObject *settings_new(PyTypeObject *type, PyObject *args, PyObject *kwargs) {
  static const char *kwlist[] = {"filter", "limit", "use_traceback", "nameloc_wrap", "window",
                                 nullptr};
  PyObject *filter = Py_None, *limit = Py_None;
  int use_traceback = 0, nameloc_wrap = 0, window = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO$ppp:MlirSettings",
                                   const_cast<char **>(kwlist), &filter, &limit, &use_traceback,
                                   &nameloc_wrap, &window))
    return nullptr;
  if (filter == Py_None) filter = default_filter();
  if (!filter) return nullptr;
  if (!is_filter(filter)) {
    PyErr_Format(PyExc_TypeError, "filter must be a callsite.Filter or None, not %.200s",
                 Py_TYPE(filter)->tp_name);
    return nullptr;
  }
  std::size_t lim = SIZE_MAX;
  if (!detail::parse_count(limit, "limit", SIZE_MAX, &lim)) return nullptr;
  auto *s = reinterpret_cast<SettingsObject *>(type->tp_alloc(type, 0));
  if (!s) return nullptr;
  s->filter = Py_NewRef(filter);
  s->limit = lim;
  s->use_traceback = use_traceback != 0;
  s->nameloc_wrap = nameloc_wrap != 0;
  s->window = window != 0;
  return reinterpret_cast<PyObject *>(s);
}

void settings_dealloc(PyObject *self) {
  Py_XDECREF(as_settings(self)->filter);
  PyTypeObject *type = Py_TYPE(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject *get_filter(PyObject *self, void *) { return Py_NewRef(as_settings(self)->filter); }
PyObject *get_limit(PyObject *self, void *) {
  if (as_settings(self)->limit == SIZE_MAX) Py_RETURN_NONE;
  return PyLong_FromSize_t(as_settings(self)->limit);
}
PyObject *get_use_traceback(PyObject *self, void *) {
  return PyBool_FromLong(as_settings(self)->use_traceback);
}
PyObject *get_nameloc_wrap(PyObject *self, void *) {
  return PyBool_FromLong(as_settings(self)->nameloc_wrap);
}
PyObject *get_window(PyObject *self, void *) { return PyBool_FromLong(as_settings(self)->window); }

PyObject *settings_repr(PyObject *self) {
  SettingsObject *s = as_settings(self);
  PyObject *limit = get_limit(self, nullptr);
  PyObject *r = limit ? PyUnicode_FromFormat(
                            "MlirSettings(filter=%R, limit=%R, use_traceback=%s, nameloc_wrap=%s, "
                            "window=%s)",
                            s->filter, limit, s->use_traceback ? "True" : "False",
                            s->nameloc_wrap ? "True" : "False", s->window ? "True" : "False")
                      : nullptr;
  Py_XDECREF(limit);
  return r;
}

PyGetSetDef settings_getset[] = {
    {"filter", get_filter, nullptr, "callsite.Filter", nullptr},
    {"limit", get_limit, nullptr, "int | None: frame limit (None: the filter's)", nullptr},
    {"use_traceback", get_use_traceback, nullptr, "bool: explicit loc= is replaced", nullptr},
    {"nameloc_wrap", get_nameloc_wrap, nullptr, "bool: wrap in Location.current's names", nullptr},
    {"window", get_window, nullptr, "bool: locations from the tracked call window", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot settings_slots[] = {
    {Py_tp_doc, const_cast<char *>("MlirSettings(filter=None, limit=None, *, use_traceback=False, "
                                   "nameloc_wrap=False, window=False): one auto_locations scope.")},
    {Py_tp_new, reinterpret_cast<void *>(settings_new)},
    {Py_tp_dealloc, reinterpret_cast<void *>(settings_dealloc)},
    {Py_tp_repr, reinterpret_cast<void *>(settings_repr)},
    {Py_tp_getset, settings_getset},
    {0, nullptr}};

PyType_Spec settings_spec = {"callsite.mlir.MlirSettings", int(sizeof(SettingsObject)), 0,
                             Py_TPFLAGS_DEFAULT, settings_slots};

}  // namespace

int current_settings(SettingsObject **out) noexcept {
  PyObject *value = nullptr;
  if (PyContextVar_Get(settings_var, nullptr, &value) < 0) return -1;
  if (value && !PyObject_TypeCheck(value, settings_type)) Py_CLEAR(value);  // None: switched off
  *out = reinterpret_cast<SettingsObject *>(value);
  return value ? 1 : 0;
}

bool init_settings() noexcept {
  if (settings_type) return true;
  settings_type = reinterpret_cast<PyTypeObject *>(PyType_FromSpec(&settings_spec));
  settings_var = PyContextVar_New("callsite.mlir.settings", nullptr);
  return settings_type && settings_var;
}

}  // namespace callsite::mlir
