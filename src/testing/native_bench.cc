// testing/native_bench.cc — the measured loops of bench/bench_native.py, in C++ so that the
// cost of a NativeFrame is measured as a JIT pays it (no Python call per iteration). Everything
// goes through _callsite's C API table (api::import() at module init), as in an extension.
#include "testing/native_bench.h"

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <thread>

#include "callsite/api.h"
#include "core/compat.h"
#include "core/frame_refs.h"
#include "native/visible_code.h"

namespace callsite::testing {
namespace {

int reify_fixed(const Executable *, std::uintptr_t state, NativeLocation *out) noexcept {
  out->filename = "bench.dsl";
  out->name = "kernel";
  out->lineno = out->end_lineno = int(state % 1000) + 1;
  out->colno = 0;
  out->end_colno = 8;
  return 0;
}

const Executable kBench{"bench", "jit", &reify_fixed};

using clock = std::chrono::steady_clock;
inline double since(clock::time_point t0) {
  return double(std::chrono::duration_cast<std::chrono::nanoseconds>(clock::now() - t0).count());
}
inline void barrier() { asm volatile("" ::: "memory"); }

// The visible code of kBench (64 states), or nullptr where visible frames are unavailable.
const VisibleCode *bench_visible() {
  static const VisibleCode *const code = api::visible_code(kBench, 64);
  return code;
}

// The visible loops, for any executable with 64 visible states (`visible`, of `exe`): the
// timed bodies are the same, so the loops with and without locals compare the executables only.
double push_pop_visible(const Executable &exe, const VisibleCode *visible, std::size_t n) noexcept {
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    NativeFrame frame(exe, i & 63, visible);
    barrier();
  }
  return since(t0);
}

double push_set_pop_visible(const Executable &exe, const VisibleCode *visible,
                            std::size_t n) noexcept {
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    NativeFrame frame(exe, i & 63, visible);
    for (std::uintptr_t pc = 0; pc < 4; ++pc) {
      frame.set_state(pc);
      barrier();
    }
  }
  return since(t0);
}

double capture_at(std::size_t remaining, std::size_t iterations, const VisibleCode *visible) {
  if (remaining) {
    NativeFrame frame(kBench, remaining % 64, visible);
    return capture_at(remaining - 1, iterations, visible);
  }
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < iterations; ++i) {
    PyObject *tb = api::capture();
    if (!tb) return -1;
    Py_DECREF(tb);
  }
  return since(t0) / double(iterations);
}

}  // namespace

__attribute__((noinline)) double empty_loop(std::size_t n) noexcept {
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) barrier();
  return since(t0);
}

__attribute__((noinline)) double push_pop_loop(std::size_t n) noexcept {
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    NativeFrame frame(kBench, i);
    barrier();
  }
  return since(t0);
}

__attribute__((noinline)) double push_set_pop_loop(std::size_t n) noexcept {
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    NativeFrame frame(kBench, i);
    for (std::uintptr_t pc = 0; pc < 4; ++pc) {
      frame.set_state(pc);
      barrier();
    }
  }
  return since(t0);
}

__attribute__((noinline)) double push_pop_visible_loop(std::size_t n) noexcept {
  return push_pop_visible(kBench, bench_visible(), n);
}

__attribute__((noinline)) double push_set_pop_visible_loop(std::size_t n) noexcept {
  return push_set_pop_visible(kBench, bench_visible(), n);
}

// Two shards' worth of states: set_state between k and kStatesPerShard + k switches the code.
const Executable kBenchSharded{"bench_sharded", "jit", &reify_fixed};

__attribute__((noinline)) double push_switch_pop_visible_loop(std::size_t n) noexcept {
  static const VisibleCode *const visible =
      api::visible_code(kBenchSharded, 2 * native::kStatesPerShard);
  constexpr std::uintptr_t second = native::kStatesPerShard;  // the second shard's first state
  const auto t0 = clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    NativeFrame frame(kBenchSharded, 0, visible);
    for (std::uintptr_t pc = 0; pc < 4; ++pc) {
      frame.set_state(pc & 1 ? pc : second + pc);
      barrier();
    }
  }
  return since(t0);
}

// An executable whose frames have variables (a C++ locals reifier, counted): the same loops
// with it show what locals= costs a push, a set_state and a pop when nobody reads them.
std::uint64_t locals_reifier_calls = 0;
PyObject *bench_locals(const Executable *, std::uintptr_t state, void *) {
  ++locals_reifier_calls;
  return Py_BuildValue("{s:K}", "pc", (unsigned long long)state);
}
const Executable kBenchLocals{"bench_locals", "jit", &reify_fixed};

const VisibleCode *bench_visible_locals() {
  static const VisibleCode *const code =
      api::set_locals(kBenchLocals, &bench_locals) ? api::visible_code(kBenchLocals, 64) : nullptr;
  return code;
}

__attribute__((noinline)) double push_pop_visible_locals_loop(std::size_t n) noexcept {
  return push_pop_visible(kBenchLocals, bench_visible_locals(), n);
}

__attribute__((noinline)) double push_set_pop_visible_locals_loop(std::size_t n) noexcept {
  return push_set_pop_visible(kBenchLocals, bench_visible_locals(), n);
}

std::uint64_t locals_calls() noexcept { return locals_reifier_calls; }

bool visible_available() noexcept { return bench_visible() != nullptr; }

double capture_with_native(std::size_t native, std::size_t iterations, bool visible) noexcept {
  return capture_at(native, iterations ? iterations : 1, visible ? bench_visible() : nullptr);
}

double visible_build_cost(std::size_t states) noexcept {
  PyObject *exe = api::new_executable("bench", "jit", &reify_fixed);
  const Executable *e = exe ? api::executable_of(exe) : nullptr;
  if (!e) {
    Py_XDECREF(exe);
    return -1;
  }
  for (std::size_t s = 0; s < states; ++s) {  // reified beforehand: the build alone is timed
    FrameInfo info;
    if (!api::symbolize(detail::native_raw_frame(e, s), &info)) {
      Py_DECREF(exe);
      return -1;
    }
  }
  const auto t0 = clock::now();
  const VisibleCode *code = api::visible_code(*e, states);
  const double ns = since(t0);
  Py_DECREF(exe);
  return code ? ns / double(states ? states : 1) : -1;
}

PyObject *visible_code_of_static(const char *name, std::size_t states) noexcept {
  char *own_name = strdup(name);
  auto *exe = own_name ? new (std::nothrow) Executable{own_name, "jit", &reify_fixed} : nullptr;
  if (!exe) {
    std::free(own_name);
    return PyErr_NoMemory();
  }
  const VisibleCode *code = api::visible_code(*exe, states);
  if (code) return Py_NewRef(code->shards[0].code);
  return PyErr_Occurred() ? nullptr : Py_NewRef(Py_None);
}

PyObject *call_in_visible_frame_on_new_thread(PyObject *callback,
                                              std::uintptr_t state) noexcept {
  const VisibleCode *visible = bench_visible();
  if (!visible) return PyErr_Occurred() ? nullptr : Py_NewRef(Py_None);
  PyObject *result = nullptr, *error = nullptr;
  Py_BEGIN_ALLOW_THREADS
  try {
    std::thread([&] {
      PyGILState_STATE gil = PyGILState_Ensure();
      {
        NativeFrame frame(kBench, state, visible);
        result = PyObject_CallNoArgs(callback);
        if (!result) frame.add_traceback();
      }
      if (!result) error = compat::take_raised_exception();
      PyGILState_Release(gil);
    }).join();
  } catch (const std::exception &) {  // the thread could not be started
  }
  Py_END_ALLOW_THREADS
  if (result) return result;
  if (error) compat::restore_raised_exception(error);
  else PyErr_SetString(PyExc_RuntimeError, "could not start a thread");
  return nullptr;
}

PyObject *reify_cost(PyObject *python_reifier, std::size_t states) noexcept {
  PyObject *exe = nullptr;
  if (python_reifier) {
    PyObject *module = PyImport_ImportModule("callsite._callsite");
    PyObject *native = module ? PyObject_GetAttrString(module, "native") : nullptr;
    PyObject *type = native ? PyObject_GetAttrString(native, "Executable") : nullptr;
    exe = type ? PyObject_CallFunction(type, "sO", "bench", python_reifier) : nullptr;
    Py_XDECREF(type);
    Py_XDECREF(native);
    Py_XDECREF(module);
  } else {
    exe = api::new_executable("bench", "jit", &reify_fixed);
  }
  if (!exe) return nullptr;
  const Executable *e = api::executable_of(exe);
  if (!e) {
    Py_DECREF(exe);
    return nullptr;
  }
  double times[2] = {0, 0};
  for (double &t : times) {  // first pass: cold (reifier + cache insert); second: warm
    const auto t0 = clock::now();
    for (std::size_t s = 0; s < states; ++s) {
      FrameInfo info;
      if (!api::symbolize(detail::native_raw_frame(e, s), &info)) {
        Py_DECREF(exe);
        return nullptr;
      }
    }
    t = since(t0) / double(states ? states : 1);
  }
  Py_DECREF(exe);
  return Py_BuildValue("(dd)", times[0], times[1]);
}

}  // namespace callsite::testing
