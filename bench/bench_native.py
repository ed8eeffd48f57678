# bench/bench_native.py — native frames: push+pop, the extra capture cost, reification.
"""What a native frame costs, measured in one run (min of repeats, gc off while timing):

1. push+pop from C++ (callsite::NativeFrame in a C++ loop, the way a JIT pays it): wall clock
   per iteration, and valgrind instruction counts per iteration — (Ir(N2) - Ir(N1)) / (N2 - N1)
   over the whole process, so start-up cancels exactly and no symbols are needed.
   Target: <= 5 ns. The same loops with visible frames (real interpreter frames, 3.12-3.15):
   target <= +3 ns over the shadow-only push+pop.
2. The Python API (`with exe.frame()`, the decorator, `frame.state = pc`) against the
   nearest Python equivalents (contextlib.nullcontext, a plain call, a slot store).
3. The extra cost of a capture per native frame on the stack, against the cost per extra
   Python frame.
5. Visible frames: the synthetic code object's build cost per state.
4. Reification: first symbolization of a (executable, state) (cold: the reifier runs, strings
   are made, the cache is filled) and later ones (warm), for a C++ and a Python reifier.

Run: PYTHONPATH=build/<dir>/pkg python bench/bench_native.py [--quick] [--no-callgrind]

It needs the test-only module callsite._callsite_testing (its C++ loops), which a plain CMake
build of the checkout has (CALLSITE_TESTING defaults to ON there) and `pip install .` leaves
out (see TESTING_BUILD below, printed when the module is missing).
"""
from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time

import callsite
from callsite import native
from callsite._cli.tables import markdown_table
from callsite._cli.timing import collector_off

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402
try:  # the C++ loops live in the test-only module (CALLSITE_TESTING=ON builds)
    from callsite import _callsite_testing as _t
except ImportError as e:
    _t = None
    _TESTING_MISSING = str(e)

#: How to get a build with the test-only module, from the checkout's root.
TESTING_BUILD = """\
  python -m pip install nanobind cmake ninja
  cmake -S . -B build/dev -G Ninja -DPython_EXECUTABLE="$(command -v python)"
  cmake --build build/dev
  PYTHONPATH=build/dev/pkg python bench/bench_native.py
or install the checkout with it (pip >= 23.1):
  python -m pip install . -C cmake.define.CALLSITE_TESTING=ON
(scripts/setup.sh builds its venvs .venv/py3.X this way.)"""

clock = time.perf_counter_ns


def best(fn, repeats):
    """Minimum over `repeats` runs of fn() (a duration in ns), gc disabled."""
    with collector_off():
        return min(fn() for _ in range(repeats))


def per_iteration(stmt_fn, n, repeats):
    """ns per iteration of a Python loop function `stmt_fn(n)`."""
    def once():
        t0 = clock()
        stmt_fn(n)
        return clock() - t0
    return best(once, repeats) / n


def table(header, rows):
    print(markdown_table(header, rows) + "\n")


# --- 1. C++ push+pop -------------------------------------------------------------------------

CG_CHILD = "import sys\nfrom callsite import _callsite_testing as t\nt.{fn}(int(sys.argv[1]))\n"


def callgrind_per_iteration(fn, n1, n2):
    """Instructions per iteration of _t.<fn>, or None + a reason."""
    if not shutil.which("valgrind"):
        return None, "valgrind not found"
    counts = []
    for n in (n1, n2):
        out = subprocess.run(
            ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
             sys.executable, "-c", CG_CHILD.format(fn=fn), str(n)],
            capture_output=True, text=True, env=dict(os.environ, PYTHONHASHSEED="0"))
        m = re.search(r"Collected : (\d+)", out.stderr)
        if out.returncode != 0 or not m:
            return None, f"callgrind failed: {out.stderr.strip()[-200:]}"
        counts.append(int(m.group(1)))
    return (counts[1] - counts[0]) / (n2 - n1), None


def bench_push_pop(args):
    n = 200_000 if args.quick else 5_000_000
    rows, results = [], {}
    loops = [("empty C++ loop (baseline)", "bench_empty"),
             ("NativeFrame push+pop", "bench_push_pop"),
             ("push + 4 x set_state + pop", "bench_push_set_pop")]
    if _t.bench_visible_available():
        loops += [("visible NativeFrame push+pop", "bench_push_pop_visible"),
                  ("visible push + 4 x set_state + pop", "bench_push_set_pop_visible"),
                  ("visible push + 4 x set_state to another shard + pop",
                   "bench_push_switch_pop_visible"),
                  ("visible push+pop, executable with locals", "bench_push_pop_visible_locals"),
                  ("visible push + 4 x set_state + pop, with locals",
                   "bench_push_set_pop_visible_locals")]
    for label, fn in loops:
        ns = best(lambda: getattr(_t, fn)(n), args.repeats) / n
        ir, why = (None, "--no-callgrind") if args.no_callgrind else \
            callgrind_per_iteration(fn, 100_000, 300_000)
        results[fn] = ns
        rows.append([label, f"{ns:.2f}", f"{ir:.1f}" if ir is not None else f"n/a ({why})"])
    print("## 1. push+pop from C++ (per iteration)\n")
    table(["loop", "ns (wall, min)", "instructions (callgrind)"], rows)
    if "bench_push_pop_visible" in results:
        extra = results["bench_push_pop_visible"] - results["bench_push_pop"]
        set_extra = ((results["bench_push_set_pop_visible"] - results["bench_push_pop_visible"])
                     - (results["bench_push_set_pop"] - results["bench_push_pop"])) / 4
        switch = (results["bench_push_switch_pop_visible"] - results["bench_push_pop_visible"]) / 4
        table(["visible vs shadow-only (wall)", "ns"],
              [["extra per push+pop", f"{extra:+.2f}"], ["extra per set_state", f"{set_extra:+.2f}"],
               ["per set_state that switches shards", f"{switch:+.2f}"]])
        with_locals = results["bench_push_pop_visible_locals"] - results["bench_push_pop_visible"]
        set_locals = (results["bench_push_set_pop_visible_locals"]
                      - results["bench_push_set_pop_visible"])
        table(["with locals= vs without (wall, same run)", "ns"],
              [["extra per push+pop", f"{with_locals:+.2f}"],
               ["extra per push + 4 x set_state + pop", f"{set_locals:+.2f}"],
               ["locals reifier calls in all the loops above", str(_t.bench_locals_calls())]])
    return results


# --- 2. the Python API -----------------------------------------------------------------------

def bench_python_api(args):
    n = 20_000 if args.quick else 300_000
    exe = native.Executable("bench", lambda s: ("bench.dsl", s))
    null = contextlib.nullcontext()
    frame = exe.frame()

    class Slot:
        __slots__ = ("state",)

    slot = Slot()

    def plain(x):
        return x

    framed = native.frame(exe)(plain)

    def loop_with_frame(n):
        f = exe.frame
        for _ in range(n):
            with f():
                pass

    def loop_with_reused_frame(n):
        for _ in range(n):
            with frame:
                pass

    def loop_with_null(n):
        for _ in range(n):
            with null:
                pass

    def loop_state(n):
        f = frame
        for i in range(n):
            f.state = i

    def loop_slot(n):
        s = slot
        for i in range(n):
            s.state = i

    def loop_framed(n):
        for i in range(n):
            framed(i)

    def loop_plain(n):
        for i in range(n):
            plain(i)

    def loop_empty(n):
        for _ in range(n):
            pass

    r = {k: per_iteration(f, n, args.repeats) for k, f in (
        ("empty", loop_empty), ("with frame()", loop_with_frame),
        ("with reused", loop_with_reused_frame), ("with null", loop_with_null),
        ("state", loop_state), ("slot", loop_slot), ("framed", loop_framed),
        ("plain", loop_plain))}
    e = r["empty"]
    rows = [
        ["with exe.frame(): (new frame each time)", f"{r['with frame()'] - e:.1f}",
         "with contextlib.nullcontext()", f"{r['with null'] - e:.1f}",
         f"{(r['with frame()'] - e) / (r['with null'] - e):.2f}x"],
        ["with frame: (reused NativeFrame)", f"{r['with reused'] - e:.1f}",
         "with contextlib.nullcontext()", f"{r['with null'] - e:.1f}",
         f"{(r['with reused'] - e) / (r['with null'] - e):.2f}x"],
        ["frame.state = i", f"{r['state'] - e:.1f}", "obj.state = i (__slots__)",
         f"{r['slot'] - e:.1f}", f"{(r['state'] - e) / (r['slot'] - e):.2f}x"],
        ["@native.frame(exe) function call", f"{r['framed'] - e:.1f}", "plain function call",
         f"{r['plain'] - e:.1f}", f"{(r['framed'] - e) / (r['plain'] - e):.2f}x"],
    ]
    print("## 2. Python API (ns per operation, loop overhead subtracted)\n")
    table(["callsite.native", "ns", "Python equivalent", "ns", "ratio"], rows)


# --- 3. capture cost per native frame ----------------------------------------------------------

def recurse(k, fn):
    return fn() if k == 0 else recurse(k - 1, fn)


def bench_capture(args):
    iters = 5_000 if args.quick else 100_000
    cost = {k: best(lambda k=k: _t.bench_capture(k, iters) * 1000, args.repeats) / 1000
            for k in (0, 10, 50)}
    visible = _t.bench_visible_available()
    vcost = {k: best(lambda k=k: _t.bench_capture(k, iters, True) * 1000, args.repeats) / 1000
             for k in (0, 50)} if visible else None
    capture = callsite.capture

    def python_at(extra):
        def once():
            def run():
                t0 = clock()
                for _ in range(iters):
                    capture()
                return clock() - t0
            return recurse(extra, run)
        return best(once, args.repeats) / iters

    py = {k: python_at(k) for k in (0, 10, 50)}
    native_per = (cost[50] - cost[0]) / 50
    python_per = (py[50] - py[0]) / 50
    rows = [[f"{k}", f"{cost[k]:.0f}", f"{py[k]:.0f}"] for k in (0, 10, 50)]
    print("## 3. capture() cost with k extra frames on the stack (ns per capture)\n")
    table(["k", "k native frames (C++)", "k Python frames"], rows)
    per_rows = [["native frame", f"{native_per:.2f}", f"{native_per / python_per:.2f}x"],
                ["Python frame", f"{python_per:.2f}", "1.00x"]]
    if vcost:
        visible_per = (vcost[50] - vcost[0]) / 50
        per_rows.insert(1, ["visible native frame", f"{visible_per:.2f}",
                            f"{visible_per / python_per:.2f}x"])
    table(["per extra frame", "ns", "ratio to a Python frame"], per_rows)


# --- 5. visible frames: synthetic code build --------------------------------------------------

def bench_visible_build(args):
    if not _t.bench_visible_available():
        print(f"## 5. visible frames: not available ({native.visible_frames_refusal()})\n")
        return
    rows = []
    # 16384: two shards, still all in the reification cache (two generations of 16384).
    for states in (64, 1024, 8192, 16384):
        ns = min(_t.bench_visible_build(states) for _ in range(args.repeats))
        rows.append([f"{states}", f"{ns:.1f}", f"{ns * states / 1000:.1f}"])
    print("## 5. visible frames: synthetic code build (states already reified)\n")
    table(["states", "ns per state", "us in all"], rows)


# --- 4. reification ------------------------------------------------------------------------------

def bench_reify(args):
    # Within one generation of the bounded cache, so that the second pass is all hits (past
    # it, hits move entries between generations and evicted states are reified again).
    states = 2_000 if args.quick else native.cache_info()["generation"] // 2
    rows = []
    for label, reifier in (("C++ reifier", None),
                           ("Python reifier", lambda s: native.Location("bench.dsl", s + 1, colno=0))):
        pairs = [_t.bench_reify(reifier, states) for _ in range(args.repeats)]
        cold, warm = min(p[0] for p in pairs), min(p[1] for p in pairs)
        rows.append([label, f"{cold:.0f}", f"{warm:.1f}", f"{cold / warm:.0f}x"])
    # A Python frame's symbolization, warm, through the same Frame-less C path is not exposed;
    # compare the Python-visible cost instead: tb[0] on a native vs a Python innermost frame.
    exe = native.Executable("bench", lambda s: ("bench.dsl", s))
    with exe.frame(1):
        tb_native = callsite.capture()
    tb_python = callsite.capture()
    tb_native[0], tb_python[0]  # warm both caches

    def index(tb):
        def once():
            t0 = clock()
            for _ in range(20_000):
                tb[0]
            return clock() - t0
        return best(once, args.repeats) / 20_000

    print("## 4. reification (ns per symbolize of a native entry)\n")
    table(["reifier", "cold (first time)", "warm (cached)", "cold / warm"], rows)
    n_ns, p_ns = index(tb_native), index(tb_python)
    table(["callsite.Frame from a capture (tb[0], warm)", "ns", "ratio"],
          [["native frame", f"{n_ns:.0f}", f"{n_ns / p_ns:.2f}x"],
           ["Python frame", f"{p_ns:.0f}", "1.00x"]])


# --- the cost of reading a native frame's variables ---------------------------------------------


def bench_locals_read(args):
    """What one read costs: taking frame.f_locals of a visible frame (no reifier call), one
    item through it (one call of a trivial reifier), and dict() of it (keys + one item each)."""
    if not _t.bench_visible_available():
        print("## locals: no visible frames here\n")
        return
    from callsite import native
    n = 20_000 if args.quick else 200_000
    regs = {"a": 1, "b": 2.0, "c": "three"}
    exe = native.Executable("kernel", locations=[native.Location("bench.dsl", 1)], visible=True,
                            locals=lambda state: regs)
    plain = native.Executable("kernel", locations=[native.Location("bench.dsl", 1)], visible=True)
    rows = []

    def measure(executable, read):
        @executable.frame(state=0)
        def body():
            f = sys._getframe(1)
            t0 = time.perf_counter_ns()
            for _ in range(n):
                read(f)
            return (time.perf_counter_ns() - t0) / n
        return min(body() for _ in range(args.repeats))

    base = measure(plain, lambda f: None)
    for label, executable, read in [
            ("frame.f_locals (no locals=)", plain, lambda f: f.f_locals),
            ("frame.f_locals (locals=): the FrameLocals, no reifier call", exe,
             lambda f: f.f_locals),
            ("frame.f_locals['a'] (one reifier call)", exe, lambda f: f.f_locals["a"]),
            ("dict(frame.f_locals) (three variables)", exe, lambda f: dict(f.f_locals))]:
        rows.append([label, f"{measure(executable, read) - base:.0f}"])
    print("## 6. reading a visible frame's variables (ns per read, Python loop overhead removed)\n")
    table(["read", "ns"], rows)


def main():
    ap = _common.parser(__doc__, repeats=7, quick="fewer iterations, at most 3 repeats",
                        json=False)
    ap.add_argument("--no-callgrind", action="store_true", help="skip instruction counts")
    args = ap.parse_args()
    if _t is None:
        sys.exit(f"bench_native.py needs callsite._callsite_testing, the test-only module that "
                 f"`pip install .` leaves out ({_TESTING_MISSING}; callsite from "
                 f"{os.path.dirname(callsite.__file__)}). A build with it:\n{TESTING_BUILD}")
    if args.quick:
        args.repeats = min(args.repeats, 3)
    print(f"# callsite native frames — Python {sys.version.split()[0]}, backend "
          f"{callsite.get_backend()} ({callsite.layout_name}), load {os.getloadavg()[0]:.1f}\n")
    bench_push_pop(args)
    bench_python_api(args)
    bench_capture(args)
    bench_reify(args)
    bench_visible_build(args)
    bench_locals_read(args)


if __name__ == "__main__":
    main()
