// mlir/capi.cc — finding MLIR's C API in the library the bindings loaded, and the capsules
// that carry its handles across the bindings' Python API.
//
// The bindings pass raw handles in PyCapsules named "<package prefix>ir.<Class>._CAPIPtr"
// (mlir-c/Bindings/Python/Interop.h: MAKE_MLIR_PYTHON_QUALNAME; the prefix is "mlir." upstream,
// "iree.compiler." in iree's build...): `obj._CAPIPtr` gives one, `Class._CAPICreate(capsule)`
// makes a Python object of one (mlir/lib/Bindings/Python/IRCore.cpp).
#include "mlir/capi.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iterator>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "mlir/bindings.h"

namespace callsite::mlir {
namespace {

PyObject *str_capi_ptr = nullptr;  // "_CAPIPtr"

constexpr const char kContextCapsule[] = "ir.Context._CAPIPtr";
constexpr const char kLocationCapsule[] = "ir.Location._CAPIPtr";

bool ends_with(const char *s, const char *suffix) {
  const std::size_t n = std::strlen(s), m = std::strlen(suffix);
  return n >= m && std::memcmp(s + n - m, suffix, m) == 0;
}

std::string directory_of(const char *path) {
  char resolved[PATH_MAX];
  std::string p = realpath(path, resolved) ? resolved : path;
  const std::size_t slash = p.rfind('/');
  return slash == std::string::npos ? std::string() : p.substr(0, slash);
}

// The directory of the module that defines the Context class: the longest prefix of its
// __module__ (iree: "iree.compiler._mlir_libs", the package beside its extensions; upstream:
// "mlir._mlir_libs._mlir.ir", of which "mlir._mlir_libs._mlir" is the extension) that
// sys.modules maps to a module with a __file__. That is the bindings' `_mlir_libs` folder, where
// the `_mlir` extension and the libraries it loaded are. Empty when none.
std::string bindings_directory(BindingsObject *b) {
  std::string found;
  PyObject *name = PyObject_GetAttrString(b->context_type, "__module__");
  const char *dotted = name && PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : nullptr;
  PyObject *modules = PyImport_GetModuleDict();  // borrowed
  std::string prefix = dotted ? dotted : "";
  while (!prefix.empty() && found.empty()) {
    PyObject *module = PyDict_GetItemString(modules, prefix.c_str());  // borrowed
    PyObject *file = module ? PyObject_GetAttrString(module, "__file__") : nullptr;
    const char *path = file && PyUnicode_Check(file) ? PyUnicode_AsUTF8(file) : nullptr;
    if (path) found = directory_of(path);
    Py_XDECREF(file);
    PyErr_Clear();
    const std::size_t dot = prefix.rfind('.');
    prefix = dot == std::string::npos ? std::string() : prefix.substr(0, dot);
  }
  Py_XDECREF(name);
  PyErr_Clear();
  return found;
}

// Every object loaded from `dir`, in load order.
std::vector<std::string> loaded_from(const std::string &dir) {
  struct Walk {
    const std::string *dir;
    std::vector<std::string> paths;
  } walk{&dir, {}};
  dl_iterate_phdr(
      [](dl_phdr_info *info, std::size_t, void *data) {
        auto *w = static_cast<Walk *>(data);
        if (info->dlpi_name && info->dlpi_name[0] && directory_of(info->dlpi_name) == *w->dir)
          w->paths.emplace_back(info->dlpi_name);
        return 0;
      },
      &walk);
  return walk.paths;
}

void set_status(BindingsObject *b, const char *format, const char *detail) {
  Py_XSETREF(b->capi_status, PyUnicode_FromFormat(format, detail));
  if (!b->capi_status) PyErr_Clear();
}

// `symbol` from a handle (that object and the libraries it loaded, in load order), accepted
// only from a library in the bindings' own directory (`_mlir_libs`): the MLIR the bindings'
// Context lives in, never another copy loaded by someone else. Sets *lib.
void *find(void *handle, const char *symbol, const std::string &dir, std::string *lib) {
  void *p = dlsym(handle, symbol);
  Dl_info info;
  if (!p || !dladdr(p, &info) || !info.dli_fname || directory_of(info.dli_fname) != dir)
    return nullptr;
  if (lib->empty()) *lib = info.dli_fname;
  return p;
}

}  // namespace

void resolve_capi(BindingsObject *b) noexcept {
  b->capi = nullptr;
  if (!str_capi_ptr && !(str_capi_ptr = PyUnicode_InternFromString("_CAPIPtr"))) {
    PyErr_Clear();
    return set_status(b, "Python API (%s)", "out of memory");
  }
  const std::string dir = bindings_directory(b);
  if (dir.empty())
    return set_status(b, "Python API (%s)", "the module of the Context class has no file");
  std::string lib;
  capi::Api api{};
  bool ok = false;
  try {
    for (const std::string &path : loaded_from(dir)) {
      // RTLD_NOLOAD: a handle to what the bindings loaded already, never a library loaded here.
      // Not closed: the bindings' extensions are never unloaded either.
      void *handle = dlopen(path.c_str(), RTLD_NOLOAD | RTLD_LAZY);
      if (!handle) continue;
      ok = true;
      lib.clear();
      auto need = [&](auto &slot, const char *symbol) {
        void *p = find(handle, symbol, dir, &lib);
        if (!p) ok = false;
        slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
      };
      need(api.file_line_col, "mlirLocationFileLineColGet");
      need(api.file_line_col_range, "mlirLocationFileLineColRangeGet");
      need(api.name, "mlirLocationNameGet");
      need(api.call_site, "mlirLocationCallSiteGet");
      need(api.unknown, "mlirLocationUnknownGet");
      need(api.is_a_name, "mlirLocationIsAName");
      need(api.name_get_name, "mlirLocationNameGetName");
      need(api.name_get_child, "mlirLocationNameGetChildLoc");
      need(api.identifier_str, "mlirIdentifierStr");
      if (!ok) continue;
      // Optional: a missing predicate only leaves that kind of location plain.
      static constexpr const char *kPredicates[] = {
          "mlirLocationIsACallSite", "mlirLocationIsAName", "mlirLocationIsAFileLineColRange",
          "mlirLocationIsAUnknown", "mlirLocationIsAFused"};
      static_assert(std::size(kPredicates) == std::size(api.is_a_typed));
      for (std::size_t i = 0; i < std::size(kPredicates); ++i)
        api.is_a_typed[i] = reinterpret_cast<bool (*)(capi::MlirLocation)>(
            find(handle, kPredicates[i], dir, &lib));
      break;
    }
  } catch (const std::exception &) {  // out of memory (never `...`: see docs/robustness.md)
    ok = false;
  }
  if (!ok)
    return set_status(b, "Python API (no library in %s exports MLIR's C API for locations)",
                      dir.c_str());
  PyObject *create = PyObject_GetAttrString(b->location_type, "_CAPICreate");
  if (!create || !PyCallable_Check(create)) {
    Py_XDECREF(create);
    PyErr_Clear();
    return set_status(b, "Python API (%s)", "ir.Location has no _CAPICreate");
  }
  auto *table = new (std::nothrow) capi::Api(api);
  if (!table) {
    Py_DECREF(create);
    PyErr_Clear();
    return set_status(b, "Python API (%s)", "out of memory");
  }
  Py_XSETREF(b->capi_create, create);
  b->capi = table;  // lives as long as the bindings: the process
  set_status(b, "MLIR C API (%s)", lib.c_str());
}

void release_capi(BindingsObject *b) noexcept {
  Py_CLEAR(b->capi_create);
  Py_CLEAR(b->capi_status);
  delete b->capi;
  b->capi = nullptr;
  std::free(b->location_capsule);
  b->location_capsule = nullptr;
}

void *context_pointer(BindingsObject *b, PyObject *ctx) {
  PyObject *capsule = PyObject_GetAttr(ctx, str_capi_ptr);
  if (!capsule) {
    PyErr_Clear();
    return nullptr;
  }
  void *ptr = nullptr;
  const char *name = PyCapsule_CheckExact(capsule) ? PyCapsule_GetName(capsule) : nullptr;
  if (name && ends_with(name, kContextCapsule)) {
    // The Location capsule's name has the same prefix ("iree.compiler." + "ir.Location...").
    const std::string prefix(name, std::strlen(name) - (sizeof(kContextCapsule) - 1));
    const std::string location = prefix + kLocationCapsule;
    if (!b->location_capsule) {
      // Kept for the process: a capsule keeps a pointer to its name, not a copy.
      char *copy = static_cast<char *>(std::malloc(location.size() + 1));
      if (copy) std::memcpy(copy, location.c_str(), location.size() + 1);
      b->location_capsule = copy;
    }
    if (b->location_capsule && location == b->location_capsule)
      ptr = PyCapsule_GetPointer(capsule, name);
  }
  Py_DECREF(capsule);
  if (!ptr) PyErr_Clear();
  return ptr;
}

capi::MlirLocation location_pointer(BindingsObject *b, PyObject *loc) {
  PyObject *capsule = PyObject_GetAttr(loc, str_capi_ptr);
  if (!capsule) return {nullptr};
  const void *ptr = nullptr;
  if (PyCapsule_CheckExact(capsule) && b->location_capsule)
    ptr = PyCapsule_GetPointer(capsule, b->location_capsule);  // its name checked
  else
    PyErr_Format(PyExc_TypeError, "callsite.mlir: expected an ir.Location of %R, not %.200s",
                 b->ir, Py_TYPE(loc)->tp_name);
  Py_DECREF(capsule);
  return {ptr};
}

PyObject *wrap_location(BindingsObject *b, capi::MlirLocation loc) {
  PyObject *capsule =
      PyCapsule_New(const_cast<void *>(loc.ptr), b->location_capsule, nullptr);
  if (!capsule) return nullptr;
  // Held: the call may run any code, including a sweep that releases the bindings' caches.
  PyObject *create = Py_NewRef(b->capi_create);
  PyObject *r = PyObject_Vectorcall(create, &capsule, 1, nullptr);
  Py_DECREF(create);
  Py_DECREF(capsule);
  return r;
}

}  // namespace callsite::mlir
