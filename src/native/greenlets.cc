// native/greenlets.cc — saves and restores the shadow-stack top and the reifier guard around
// greenlet switches.
#include "native/greenlets.h"

#include <exception>
#include <unordered_map>

#include "native/reifier_guard.h"
#include "native/shadow_stack.h"

namespace callsite::native {
namespace {

// What a suspended greenlet had running: its shadow-stack top, and the locals reifiers it was
// suspended in (a reifier may switch greenlets).
struct Suspended {
  NativeLink *head;
  ReifierGuard guard;
};

// Per thread (greenlets never move between threads): what each suspended greenlet that had
// frames or running reifiers had, by greenlet object. An entry lives from the switch out to
// the switch back in; a suspended greenlet that is collected is switched back in to be killed
// (GreenletExit), which removes it. Holds no references.
thread_local std::unordered_map<const PyObject *, Suspended> t_suspended;
// Read on every push from Python: initial-exec TLS, as the shadow stack's, so the read is
// an offset from the thread pointer rather than a __tls_get_addr call.
constinit thread_local bool t_hooked [[gnu::tls_model("initial-exec")]] = false;
constinit thread_local Py_ssize_t t_modules_seen [[gnu::tls_model("initial-exec")]] = -1;

PyObject *previous_key = nullptr;  // thread-state dict key of the trace function we chained

// A greenlet that finished with frames still pushed (a bug of its own) is never resumed:
// keeping its top would only leak the entry.
bool finished(PyObject *greenlet) {
  PyObject *dead = PyObject_GetAttrString(greenlet, "dead");
  const int yes = dead ? PyObject_IsTrue(dead) : 0;
  Py_XDECREF(dead);
  if (yes < 0 || !dead) PyErr_Clear();
  return yes == 1;
}

// greenlet's trace hook: (event, (origin, target)) for "switch" and "throw", in the target's
// context. Never raises for itself: an error in a trace function is reported by greenlet in
// the middle of the user's switch.
PyObject *on_switch(PyObject *, PyObject *const *args, Py_ssize_t nargs) {
  if (nargs == 2 && PyTuple_Check(args[1]) && PyTuple_GET_SIZE(args[1]) == 2) {
    PyObject *origin = PyTuple_GET_ITEM(args[1], 0);
    const PyObject *target = PyTuple_GET_ITEM(args[1], 1);
    ThreadStack *stack = this_thread();
    ReifierGuard &guard = reifier_guard();
    Suspended resumed{nullptr, {{}, 0}};
    if (auto it = t_suspended.find(target); it != t_suspended.end()) {
      resumed = it->second;
      t_suspended.erase(it);
    }
    if ((stack->head || guard.depth) && !finished(origin)) {
      try {
        t_suspended[origin] = Suspended{stack->head, guard};
      } catch (const std::exception &) {  // out of memory: the frames stay visible where they are
        return Py_NewRef(Py_None);
      }
    }
    stack->head = resumed.head;
    guard = resumed.guard;
  }
  PyObject *dict = PyThreadState_GetDict();
  PyObject *previous = dict ? PyDict_GetItemWithError(dict, previous_key) : nullptr;
  if (previous) return PyObject_Vectorcall(previous, args, size_t(nargs), nullptr);
  if (PyErr_Occurred()) return nullptr;
  Py_RETURN_NONE;
}

PyMethodDef on_switch_def = {
    "_native_greenlet_switch",
    reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(on_switch)), METH_FASTCALL,
    "callsite.native's greenlet trace hook: native frames follow their greenlet."};

PyObject *hook = nullptr;

bool install(PyObject *greenlet) {
  if (!previous_key && !(previous_key = PyUnicode_InternFromString("callsite.native.greenlet_trace")))
    return false;
  if (!hook && !(hook = PyCFunction_NewEx(&on_switch_def, nullptr, nullptr))) return false;
  PyObject *previous = PyObject_CallMethod(greenlet, "settrace", "O", hook);
  if (!previous) return false;
  PyObject *dict = PyThreadState_GetDict();
  int rc = 0;
  if (previous != Py_None && previous != hook)
    rc = dict ? PyDict_SetItem(dict, previous_key, previous) : -1;
  Py_DECREF(previous);
  if (rc < 0) {
    if (!PyErr_Occurred()) PyErr_SetString(PyExc_RuntimeError, "no thread-state dict");
    return false;
  }
  t_hooked = true;
  return true;
}

// The interpreter's module dict (PyImport_GetModuleDict(): the same object from start-up to
// finalization; rebinding sys.modules does not replace it), held for the process so that a
// push made during finalization still reads a live dict. Looked up once: the lookup reads
// the thread state, on every push from Python otherwise.
PyObject *module_dict() noexcept {
  static PyObject *const modules = Py_XNewRef(PyImport_GetModuleDict());
  return modules;
}

}  // namespace

bool track_greenlets(bool force) noexcept {
  if (t_hooked) return true;
  PyObject *modules = module_dict();
  const Py_ssize_t size = modules && PyDict_Check(modules) ? PyDict_GET_SIZE(modules) : -1;
  if (!force && size == t_modules_seen) return true;  // nothing imported since the last look
  t_modules_seen = size;
  PyObject *name = PyUnicode_FromString("greenlet");
  PyObject *greenlet = name ? PyImport_GetModule(name) : nullptr;
  Py_XDECREF(name);
  if (!greenlet) return !PyErr_Occurred();  // not imported: no switches to follow
  const bool ok = install(greenlet);
  Py_DECREF(greenlet);
  return ok;
}

}  // namespace callsite::native
