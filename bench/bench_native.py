# bench/bench_native.py — native frames: push+pop, the extra capture cost, reification.
"""What a native frame costs, in one run (min of interleaved repeats, gc off while timing):

1. push+pop from C++ (callsite::NativeFrame in a C++ loop, the way a JIT pays it), shadow-only
   and visible (3.12+): wall clock and instructions per iteration (bench/_callgrind.py's
   per_iteration over the whole process: no symbols needed);
2. the Python API (`with exe.frame()`, the decorator, `frame.state = pc`) against the nearest
   Python equivalents (contextlib.nullcontext, a plain call, a slot store);
3. a capture's extra cost per native frame on the stack, against a Python frame's;
4. reification: the first symbolization of an (executable, state) and later ones, for a C++
   and a Python reifier; 5. a visible frame's synthetic code build per state; 6. reading a
   visible frame's variables.

    PYTHONPATH=build/<dir>/pkg python bench/bench_native.py [--quick] [--no-callgrind]

It needs the test-only module callsite._callsite_testing (its C++ loops), which `pip install .`
leaves out (TESTING_BUILD, printed when it is missing, says how to get it).
"""
from __future__ import annotations

import contextlib
import os
import sys

import callsite
from callsite import native
from callsite._cli.tables import markdown_table
from callsite._cli.timing import clock, minima, round_robin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _callgrind  # noqa: E402
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


def interleaved(run, labels, n, repeats):
    """ns per iteration of each label, where run(label, n) times n iterations in ns: the
    package's round_robin (repeats interleaved, gc off), the minimum kept."""
    return minima(round_robin(run, labels, repeats=repeats, iterations=n))


def timed_calls(fns):
    """run(label, n) timing fns[label](n)."""
    def run(label, n):
        t0 = clock()
        fns[label](n)
        return clock() - t0
    return run


def table(header, rows):
    print(markdown_table(header, rows) + "\n")


# --- 1. C++ push+pop -------------------------------------------------------------------------

CG_CHILD = "import sys\nfrom callsite import _callsite_testing as t\nt.{fn}(int(sys.argv[1]))\n"


def instructions(fn, args):
    """Instructions per iteration of _t.<fn>, or why there are none."""
    why = "--no-callgrind" if args.no_callgrind else _callgrind.missing()
    if why:
        return f"n/a ({why})"
    argv_of = lambda n: [sys.executable, "-c", CG_CHILD.format(fn=fn), str(n)]  # noqa: E731
    try:
        return f"{_callgrind.per_iteration(argv_of, 100_000, 300_000):.1f}"
    except _callgrind.CallgrindError as e:
        return f"n/a ({str(e)[-200:]})"


def bench_push_pop(args):
    n = 200_000 if args.quick else 5_000_000
    loops = {"bench_empty": "empty C++ loop (baseline)",
             "bench_push_pop": "NativeFrame push+pop",
             "bench_push_set_pop": "push + 4 x set_state + pop"}
    if _t.bench_visible_available():
        loops.update({
            "bench_push_pop_visible": "visible NativeFrame push+pop",
            "bench_push_set_pop_visible": "visible push + 4 x set_state + pop",
            "bench_push_switch_pop_visible": "visible push + 4 x set_state to another shard + pop",
            "bench_push_pop_visible_locals": "visible push+pop, executable with locals",
            "bench_push_set_pop_visible_locals": "visible push + 4 x set_state + pop, with locals"})
    results = interleaved(lambda fn, n: getattr(_t, fn)(n), loops, n, args.repeats)
    print("## 1. push+pop from C++ (per iteration)\n")
    table(["loop", "ns (wall, min)", "instructions (callgrind)"],
          [[label, f"{results[fn]:.2f}", instructions(fn, args)] for fn, label in loops.items()])
    if "bench_push_pop_visible" in results:
        extra = results["bench_push_pop_visible"] - results["bench_push_pop"]
        set_extra = ((results["bench_push_set_pop_visible"] - results["bench_push_pop_visible"])
                     - (results["bench_push_set_pop"] - results["bench_push_pop"])) / 4
        switch = (results["bench_push_switch_pop_visible"] - results["bench_push_pop_visible"]) / 4
        table(["visible vs shadow-only (wall)", "ns"],
              [["extra per push+pop", f"{extra:+.2f}"], ["extra per set_state", f"{set_extra:+.2f}"],
               ["per set_state that switches shards", f"{switch:+.2f}"]])
        with_locals = results["bench_push_pop_visible_locals"] - results["bench_push_pop_visible"]
        table(["with locals= vs without (wall, same run)", "ns"],
              [["extra per push+pop", f"{with_locals:+.2f}"],
               ["locals reifier calls in all the loops above", str(_t.bench_locals_calls())]])


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

    # A function per loop, not a factory's closures: those would share one code object, and
    # with it the specialising interpreter's caches, between callsite's object and Python's.
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

    loops = {"empty": loop_empty, "with frame()": loop_with_frame,
             "with reused": loop_with_reused_frame, "with null": loop_with_null,
             "state": loop_state, "slot": loop_slot, "framed": loop_framed, "plain": loop_plain}
    r = interleaved(timed_calls(loops), loops, n, args.repeats)
    e = r["empty"]

    def row(ours, label, theirs, their_label):
        return [label, f"{r[ours] - e:.1f}", their_label, f"{r[theirs] - e:.1f}",
                f"{(r[ours] - e) / (r[theirs] - e):.2f}x"]

    print("## 2. Python API (ns per operation, loop overhead subtracted)\n")
    table(["callsite.native", "ns", "Python equivalent", "ns", "ratio"], [
        row("with frame()", "with exe.frame(): (new frame each time)", "with null",
            "with contextlib.nullcontext()"),
        row("with reused", "with frame: (reused NativeFrame)", "with null",
            "with contextlib.nullcontext()"),
        row("state", "frame.state = i", "slot", "obj.state = i (__slots__)"),
        row("framed", "@native.frame(exe) function call", "plain", "plain function call")])


# --- 3. capture cost per native frame ----------------------------------------------------------

def recurse(k, fn):
    return fn() if k == 0 else recurse(k - 1, fn)


def bench_capture(args):
    iters = 5_000 if args.quick else 100_000
    capture = callsite.capture

    def captures(n):
        t0 = clock()
        for _ in range(n):
            capture()
        return clock() - t0

    def run(label, _):  # ns per capture with k frames of `kind` added
        kind, k = label
        if kind == "python":
            return recurse(k, lambda: captures(iters)) / iters
        return _t.bench_capture(k, iters, kind == "visible")

    names = {"native": "native frame", "visible": "visible native frame", "python": "Python frame"}
    if not _t.bench_visible_available():
        del names["visible"]
    labels = [(kind, k) for kind in names for k in (0, 50)]
    cost = interleaved(run, labels, 1, args.repeats)
    per = {kind: (cost[kind, 50] - cost[kind, 0]) / 50 for kind in names}
    print("## 3. capture() cost per extra frame on the stack (ns, from 0 and 50 extra frames)\n")
    table(["per extra frame", "ns", "ratio to a Python frame"],
          [[name, f"{per[kind]:.2f}", f"{per[kind] / per['python']:.2f}x"]
           for kind, name in names.items()])


# --- 4. reification ------------------------------------------------------------------------------

def bench_reify(args):
    # Within one generation of the bounded cache, so that the second pass is all hits (past
    # it, hits move entries between generations and evicted states are reified again).
    states = 2_000 if args.quick else native.cache_info()["generation"] // 2
    rows = []
    for label, reifier in (("C++ reifier", None),
                           ("Python reifier", lambda s: native.Location("bench.dsl", s + 1, colno=0)),
                           ("Python reifier, tuple", lambda s: ("bench.dsl", s + 1, None, None,
                                                                None, 0))):
        pairs = [_t.bench_reify(reifier, states) for _ in range(args.repeats)]
        cold, warm = min(p[0] for p in pairs), min(p[1] for p in pairs)
        rows.append([label, f"{cold:.0f}", f"{warm:.1f}", f"{cold / warm:.0f}x"])
    # A Python frame's symbolization, warm, through the same Frame-less C path is not exposed;
    # compare the Python-visible cost instead: tb[0] on a native vs a Python innermost frame.
    exe = native.Executable("bench", lambda s: ("bench.dsl", s))
    with exe.frame(1):
        tbs = {"native frame": callsite.capture()}
    tbs["Python frame"] = callsite.capture()
    for tb in tbs.values():
        tb[0]  # warm both caches

    def index(tb):
        def loop(n):
            for _ in range(n):
                tb[0]
        return loop

    print("## 4. reification (ns per symbolize of a native entry)\n")
    table(["reifier", "cold (first time)", "warm (cached)", "cold / warm"], rows)
    ns = interleaved(timed_calls({k: index(tb) for k, tb in tbs.items()}), tbs, 20_000,
                     args.repeats)
    table(["callsite.Frame from a capture (tb[0], warm)", "ns", "ratio"],
          [[k, f"{v:.0f}", f"{v / ns['Python frame']:.2f}x"] for k, v in ns.items()])


# --- 5. visible frames: synthetic code build --------------------------------------------------

def bench_visible_build(args):
    if not _t.bench_visible_available():
        print(f"## 5. visible frames: not available ({native.visible_frames_refusal()})\n")
        return
    # 16384: two shards, still all in the reification cache (two generations of 16384).
    ns = interleaved(lambda states, _: _t.bench_visible_build(states), (64, 1024, 8192, 16384),
                     1, args.repeats)
    print("## 5. visible frames: synthetic code build (states already reified)\n")
    table(["states", "ns per state", "us in all"],
          [[f"{states}", f"{v:.1f}", f"{v * states / 1000:.1f}"] for states, v in ns.items()])


# --- 6. the cost of reading a native frame's variables -------------------------------------------

def bench_locals_read(args):
    """What one read costs: taking frame.f_locals of a visible frame (no reifier call), one
    item through it (one call of a trivial reifier), and dict() of it (keys + one item each)."""
    if not _t.bench_visible_available():
        print("## locals: no visible frames here\n")
        return
    n = 20_000 if args.quick else 200_000
    regs = {"a": 1, "b": 2.0, "c": "three"}
    exe = native.Executable("kernel", locations=[native.Location("bench.dsl", 1)], visible=True,
                            locals=lambda state: regs)
    plain = native.Executable("kernel", locations=[native.Location("bench.dsl", 1)], visible=True)

    def reads(executable, read):
        @executable.frame(state=0)
        def body(n):
            f = sys._getframe(1)
            for _ in range(n):
                read(f)
        return body

    bodies = {
        "base": reads(plain, lambda f: None),
        "frame.f_locals (no locals=)": reads(plain, lambda f: f.f_locals),
        "frame.f_locals (locals=): the FrameLocals, no reifier call":
            reads(exe, lambda f: f.f_locals),
        "frame.f_locals['a'] (one reifier call)": reads(exe, lambda f: f.f_locals["a"]),
        "dict(frame.f_locals) (three variables)": reads(exe, lambda f: dict(f.f_locals))}
    ns = interleaved(timed_calls(bodies), bodies, n, args.repeats)
    print("## 6. reading a visible frame's variables (ns per read, Python loop overhead removed)\n")
    table(["read", "ns"], [[k, f"{v - ns['base']:.0f}"] for k, v in ns.items() if k != "base"])


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
