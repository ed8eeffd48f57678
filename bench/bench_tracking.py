# bench/bench_tracking.py — tracked windows: the per-call tax, and the query cost vs the walk.
"""Two questions, measured in one run:

1. The tax: what recording every call costs a call-heavy pure-Python workload (recursive fib,
   a small stack-machine interpreter), with tracking off / callsite profile mode / callsite monitoring
   mode, against pure-Python trackers (bench/python_trackers.py: "plain" as proposed,
   "lean" = the proposal's round-robin suggestion). Tax per call = (t_mode - t_off) / calls, calls
   being the call events the mode records (profile: call + c_call; monitoring: CALL).
   Target: callsite's tax <= 50% of the Python tracker's, per mode.
2. The query: the most recent user call site from the window (capture(source="window",
   limit=1), recording filter = the user filter) vs walking the stack (Filter.first_user_frame,
   capture(filter=f, limit=1), MLIR-style capture(filter=f) with limit 10), at stack depths 5,
   20, 200, with the user's frame just below the query (1 library frame) or at the bottom
   (every frame above it in the library).

Run: PYTHONPATH=build/<dir>/pkg python bench/bench_tracking.py [--quick] [--json PATH]
Timing: min of several repeats, round-robin over the configurations; gc disabled while timing.
"""
from __future__ import annotations

import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_trackers  # noqa: E402

import callsite  # noqa: E402
import callsite.tracking as tracking  # noqa: E402
import _common  # noqa: E402
from callsite._cli.stacks import run_in_fresh_thread  # noqa: E402
from callsite._cli.tables import fmt_ns, fmt_ratio, markdown_table  # noqa: E402
from callsite._cli.timing import round_robin  # noqa: E402

clock = time.perf_counter_ns
HAVE_MONITORING = tracking.available_modes()["monitoring"] is None


# --- workloads ------------------------------------------------------------------------------

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class VM:
    """A tiny stack machine: one Python method call per instruction, list push/pop per value."""

    def __init__(self):
        self.stack = []

    def push(self, v):
        self.stack.append(v)

    def pop(self):
        return self.stack.pop()

    def op_const(self, arg):
        self.push(arg)

    def op_add(self, arg):
        b = self.pop()
        self.push(self.pop() + b)

    def op_dup(self, arg):
        v = self.pop()
        self.push(v)
        self.push(v)

    def op_drop(self, arg):
        self.pop()

    def run(self, program, times):
        ops = [(getattr(self, "op_" + op), arg) for op, arg in program]
        for _ in range(times):
            for fn, arg in ops:
                fn(arg)
        return len(self.stack)


PROGRAM = [("const", 1), ("const", 2), ("add", None), ("dup", None), ("add", None),
           ("const", 3), ("add", None), ("drop", None)]

WORKLOADS = {
    "recursive fib(18)": lambda: fib(18),
    "interpreter loop (8 ops x 300)": lambda: VM().run(PROGRAM, 300),
}


def time_workload(fn, repeats_inner=3):
    best = None
    for _ in range(repeats_inner):
        t0 = clock()
        fn()
        t = clock() - t0
        best = t if best is None or t < best else best
    return best


class CallsiteTracker:
    def __init__(self, mode, window=8):
        self.mode, self.window = mode, window
        self.name = f"callsite {mode} (C)"

    def start(self):
        tracking.enable(mode=self.mode, window=self.window)

    def stop(self):
        tracking.disable()


def count_calls(mode, fn):
    tracking.enable(mode=mode)
    before = tracking.status()["recorded"]
    fn()
    n = tracking.status()["recorded"] - before - 1  # status() itself is one recorded call
    tracking.disable()
    return n


def filtered_tax_table(repeats):
    """The tax with a recording filter on calls made from excluded (library) code: monitoring
    switches those sites off (DISABLE), profile mode still runs its function on each event."""
    d = tempfile.mkdtemp(prefix="callsite_trk_fib_")
    path = os.path.join(d, "trk_fib_lib.py")
    src = "def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
    with open(path, "w") as f:
        f.write(src)
    ns = {"__name__": "trk_fib_lib"}
    exec(compile(src, path, "exec"), ns)
    lib_fib = ns["fib"]
    flt = callsite.Filter()
    flt.exclude_file(path)
    modes = ["profile"] + (["monitoring"] if HAVE_MONITORING else [])
    fn = lambda: lib_fib(18)  # noqa: E731
    fn()

    def run(key, _n):
        if key == "off":
            return time_workload(fn)
        with tracking.enable(mode=key, window=8, filter=flt):
            return time_workload(fn)

    best = {k: t.best for k, t in round_robin(run, ["off", *modes], repeats=repeats).items()}
    calls = count_calls("profile", fn)
    workload = "fib(18) in library code, recording filter drops it"
    rows = [(workload, mode, f"{calls:,}",
             fmt_ns(best["off"] / calls), fmt_ns((best[mode] - best["off"]) / calls),
             fmt_ratio(best[mode] / best["off"])) for mode in modes]
    print(markdown_table(["workload", "mode", "calls", "off ns/call", "callsite tax",
                          "slowdown"], rows))
    return [{"workload": workload, "mode": mode, "calls": calls, "off_ns": best["off"] / calls,
             "tax_ns": (best[mode] - best["off"]) / calls} for mode in modes]


def tax_table(repeats):
    modes = ["profile"] + (["monitoring"] if HAVE_MONITORING else [])
    trackers = {"profile": [CallsiteTracker("profile"), python_trackers.LeanProfile(),
                            python_trackers.PlainProfile()]}
    if HAVE_MONITORING:
        trackers["monitoring"] = [CallsiteTracker("monitoring"), python_trackers.LeanMonitoring(),
                                  python_trackers.PlainMonitoring()]
    else:
        print("  monitoring mode: SKIPPED — sys.monitoring needs Python 3.12+")
    rows, verdicts, records = [], [], []
    for wname, fn in WORKLOADS.items():
        fn()  # warm (specialisation, caches)
        configs = {"off": None}
        for mode in modes:
            for t in trackers[mode]:
                configs[f"{mode}/{t.name}"] = t
        def run(key, _n):
            tracker = configs[key]
            if tracker is None:
                return time_workload(fn)
            tracker.start()
            try:
                return time_workload(fn)
            finally:
                tracker.stop()

        best = {k: t.best for k, t in round_robin(run, configs, repeats=repeats).items()}
        for mode in modes:
            calls = count_calls(mode, fn)
            off = best["off"] / calls
            taxes = {t.name: best[f"{mode}/{t.name}"] / calls - off for t in trackers[mode]}
            callsite_tax = taxes[f"callsite {mode} (C)"]
            lean = taxes[trackers[mode][1].name]
            plain = taxes[trackers[mode][2].name]
            rows.append((wname, mode, f"{calls:,}", fmt_ns(off), fmt_ns(callsite_tax), fmt_ns(lean),
                         fmt_ns(plain), fmt_ratio(callsite_tax / lean), fmt_ratio(callsite_tax / plain),
                         fmt_ratio((off + callsite_tax) / off)))
            verdicts.append((wname, mode, callsite_tax / lean))
            records.append({"workload": wname, "mode": mode, "calls": calls, "off_ns": off,
                            "tax_ns": taxes})
    print(markdown_table(
        ["workload", "mode", "calls", "off ns/call", "callsite tax", "lean Python tax",
         "plain Python tax", "callsite/lean", "callsite/plain", "slowdown (callsite)"], rows))
    for wname, mode, r in verdicts:
        print(f"  target (callsite tax <= 50% of the lean Python tax), {mode}, {wname}: "
              f"{'met' if r <= 0.5 else 'NOT met'} ({r:.0%})")
    return records


# --- query cost -----------------------------------------------------------------------------

LIB_SRC = '''\
def descend(k, fn, arg):
    # Library frames: the excluded part of the stack (an op builder and what it calls).
    if k > 0:
        return descend(k - 1, fn, arg)
    return fn(arg)
'''

QUERIES = {
    "window: capture(source='window', limit=1)": "capture(source='window', limit=1)",
    "window: tracking.last()": "last()",
    "walk: Filter.first_user_frame()": "flt.first_user_frame()",
    "walk: capture(filter=f, limit=1)": "capture(filter=flt, limit=1)",
    "walk: capture(filter=f) (limit 10, MLIR-like)": "capture(filter=flt)",
    "empty loop": "pass",
}


def load_lib(flt):
    """The library module, in its own (excluded) file: descend() and one timing loop per query,
    so that every frame above the user's is a library frame, the loops included."""
    d = tempfile.mkdtemp(prefix="callsite_trk_bench_")
    path = os.path.join(d, "trk_bench_lib.py")
    src = LIB_SRC
    for i, stmt in enumerate(QUERIES.values()):
        src += (f"def loop_{i}(n):\n    t0 = clock()\n    for _ in repeat(None, n):\n"
                f"        {stmt}\n    return clock() - t0\n")
    src += "def both(_):\n    return capture(source='window', limit=1), flt.first_user_frame()\n"
    with open(path, "w") as f:
        f.write(src)
    flt.exclude_file(path)
    ns = {"__name__": "trk_bench_lib", "__file__": path, "clock": clock, "flt": flt,
          "capture": callsite.capture, "last": tracking.last, "repeat": __import__("itertools").repeat}
    exec(compile(src, path, "exec"), ns)
    loops = {name: ns[f"loop_{i}"] for i, name in enumerate(QUERIES)}
    return ns, loops


def user_descend(k, lib_frames, lib, fn, arg):
    # User frames: the kept part of the stack; the last one calls into the library.
    if k > 0:
        return user_descend(k - 1, lib_frames, lib, fn, arg)
    return lib["descend"](lib_frames - 1, fn, arg)


def depth_now():
    f, n = sys._getframe(1), 0
    while f is not None:
        n, f = n + 1, f.f_back
    return n


def run_at(depth, lib_frames, lib, fn, arg):
    """fn(arg) with exactly `depth` frames on the stack, fn's included: the top `lib_frames`
    + fn are library frames, the rest below them are user frames (and the harness)."""
    here = depth_now()  # frames up to and including run_at
    user = depth - here - lib_frames - 1  # user_descend frames
    if user < 1 or lib_frames < 1:
        raise ValueError(f"depth {depth} too shallow for this harness ({here} frames)")
    return user_descend(user - 1, lib_frames, lib, fn, arg)


def _measure(result, depth, lf, lib, loop, n, window_filter, mode):
    # The first frame of a fresh thread: the stack depth is exact from here.
    try:
        if window_filter is not None:
            tracking.enable(mode=mode, window=8, filter=window_filter)
        try:
            result.set(run_at(depth, lf, lib, loop, n))
        finally:
            if window_filter is not None:
                tracking.disable()
    except BaseException as e:
        result.set(e)


def query_table(repeats, quick):
    flt = callsite.Filter()
    lib, loops = load_lib(flt)
    mode = tracking.available_modes()["auto"]
    n = 2000 if quick else 20000
    rows, records = [], []
    for depth in (5, 20, 200):
        for placement, lib_frames in (("user frame just below", 1),
                                      ("user frame at the bottom", depth - 4)):
            lf = lib_frames
            def run(name, n):
                wf = flt if name.startswith("window") else None
                return run_in_fresh_thread(_measure, depth, lf, lib, loops[name], n, wf, mode)

            best = {k: t.best for k, t in round_robin(run, loops, repeats=repeats,
                                                       iterations=n).items()}
            # All methods must name the same user call site.
            tb, frame = run_in_fresh_thread(_measure, depth, lf, lib, lib["both"], None, flt, mode)
            same = len(tb) == 1 and tb[0].code is frame.code and tb[0].lineno == frame.lineno
            base = best["walk: Filter.first_user_frame()"]
            records.append({"depth": depth, "placement": placement, "library_frames": lf,
                            "ns": best, "same_site": same})
            for name, t in best.items():
                rows.append((depth, f"{placement} ({lf} library frames)", name, fmt_ns(t),
                             fmt_ratio(t / base),
                             "" if name.startswith("empty") else ("same site" if same
                                                                   else "DIFFERENT")))
    print(markdown_table(["depth", "stack", "query", "ns/query", "vs first_user_frame",
                          "check"], rows, align="rllrrl"))
    print(f"  window mode: {mode}, recording filter = the query filter; the walk runs with "
          "tracking off. Times include the loop (see 'empty loop').")
    return {"mode": mode, "rows": records}


def main():
    ap = _common.parser(__doc__, repeats=7, quick="3 repeats, 2,000 queries per repeat")
    args = ap.parse_args()
    repeats = 3 if args.quick else args.repeats
    print(f"# callsite tracking benchmark — {_common.environment_line()}")
    print(f"callsite backend={callsite.get_backend()}; repeats={repeats} (min kept)\n")
    print("## Tax per call (ns; tax = ns/call with the tracker minus ns/call without)\n")
    tax = tax_table(repeats)
    print("\n## Tax per call on calls from excluded code (recording filter)\n")
    filtered = filtered_tax_table(repeats)
    print("\n## Query cost (ns per query; the walk runs with tracking off)\n")
    query = query_table(repeats, args.quick)
    if args.json:
        _common.write_results(args.json, "tracking", {
            "python": sys.version.split()[0], "repeats": repeats,
            "modes": tracking.available_modes(), "tax": tax, "filtered_tax": filtered,
            "query": query})


if __name__ == "__main__":
    main()
