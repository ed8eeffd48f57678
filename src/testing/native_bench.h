// testing/native_bench.h — C++ loops for bench/bench_native.py (push+pop, capture,
// reification), through the C API as an extension pays for them, and the C++ executables
// the tests need that Python cannot make (a static one with a name that is not UTF-8, a
// frame pushed on a thread that has no Python frame).
#pragma once
#include <Python.h>

#include <cstddef>
#include <cstdint>

namespace callsite::testing {

/// Wall-clock ns of `n` iterations of: an empty loop / NativeFrame push+pop / push, 4 ×
/// set_state, pop. Each loop is its own noinline function so callgrind can count it alone.
double empty_loop(std::size_t n) noexcept;
double push_pop_loop(std::size_t n) noexcept;
double push_set_pop_loop(std::size_t n) noexcept;
/// The same two loops with a visible frame (a real interpreter frame; 64 states).
double push_pop_visible_loop(std::size_t n) noexcept;
double push_set_pop_visible_loop(std::size_t n) noexcept;
/// push, 4 × set_state each moving to the other of two shards (a code switch), pop.
double push_switch_pop_visible_loop(std::size_t n) noexcept;
/// The two visible loops with an executable that has a C++ locals reifier (api::set_locals),
/// and how many times that reifier ran (nobody reads the frames' variables in the loops).
double push_pop_visible_locals_loop(std::size_t n) noexcept;
double push_set_pop_visible_locals_loop(std::size_t n) noexcept;
std::uint64_t locals_calls() noexcept;
/// True when this interpreter has visible frames (the loops above are visible ones).
bool visible_available() noexcept;

/// ns per callsite::capture() (+ Py_DECREF) with `native` C++ frames pushed on top of the
/// caller's stack (visible ones when `visible`); -1 with an error set on failure. GIL held.
double capture_with_native(std::size_t native, std::size_t iterations, bool visible) noexcept;

/// ns per state to build the synthetic code object of a fresh executable with `states`
/// already reified states; -1 on failure. GIL held.
double visible_build_cost(std::size_t states) noexcept;

/// The first synthetic code object of a static C++ executable named `name` (raw bytes, as a
/// C++ declaration may hold them; the executable lives for the process, as static ones do)
/// with `states` states: a new reference, None where visible frames are unavailable, or
/// nullptr + error.
PyObject *visible_code_of_static(const char *name, std::size_t states) noexcept;

/// Calls `callback()` on a thread started from C++ (its own thread state from
/// PyGILState_Ensure, no Python frame below) inside a visible frame of the bench executable at
/// `state`: the callback's result, None where visible frames are unavailable, or nullptr +
/// the callback's exception. GIL held; released while the thread runs.
PyObject *call_in_visible_frame_on_new_thread(PyObject *callback, std::uintptr_t state) noexcept;

/// (cold, warm) ns per symbolize of a native entry over `states` distinct states of a fresh
/// executable: C++ reifier when `python_reifier` is null, else that Python callable. GIL held.
PyObject *reify_cost(PyObject *python_reifier, std::size_t states) noexcept;

}  // namespace callsite::testing
