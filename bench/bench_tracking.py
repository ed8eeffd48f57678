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

import contextlib
import functools
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import python_trackers  # noqa: E402

import callsite  # noqa: E402
import callsite.tracking as tracking  # noqa: E402
import _common  # noqa: E402
from callsite._cli.stacks import run_in_fresh_thread, stack_depth  # noqa: E402
from callsite._cli.tables import fmt_ns, fmt_ratio, markdown_table  # noqa: E402
from callsite._cli.timing import (clock, compile_statement, exec_as_module, minima,  # noqa: E402
                                  round_robin)

MODES = ["profile"] + (["monitoring"] if tracking.available_modes()["monitoring"] is None else [])


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

# The library: a module file every filter here excludes (exec_as_module writes it to disk).
# descend() builds the library frames above the user's; fib() is the workload of the filtered
# tax; both() is every query's answer, to check that they agree.
LIBRARY = '''\
def descend(k, fn, arg):
    # Library frames: the excluded part of the stack (an op builder and what it calls).
    if k > 0:
        return descend(k - 1, fn, arg)
    return fn(arg)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
def both(_):
    return capture(source='window', limit=1), flt.first_user_frame()
'''


def page_table(name: str, labels: int, **run) -> str:
    """The benchmarks page's table `name` of this run; `labels`: its label columns."""
    return _common.run_table(lambda results: _common.page_tables().table(name, results),
                             "tracking", run, labels)


# --- the tax per call -----------------------------------------------------------------------

def best_ns(workload, scopes: dict, repeats: int) -> dict[str, float]:
    """ns of one run of `workload` inside each scope (a context manager's factory): the minimum
    of three runs per round, of `repeats` rounds taken round-robin."""
    def run(label, _n):
        with scopes[label]():
            return min(timed(workload) for _ in range(3))

    return minima(round_robin(run, scopes, repeats=repeats))


def timed(fn) -> int:
    t0 = clock()
    fn()
    return clock() - t0


def trackers(mode: str) -> dict:
    """The trackers of `mode` by the names the result file keeps: callsite's, then the lean and
    the plain Python ones."""
    return {f"callsite {mode} (C)": functools.partial(tracking.enable, mode=mode, window=8),
            **{t.name: t for t in python_trackers.TRACKERS[mode]}}


def count_calls(mode, fn):
    with tracking.enable(mode=mode):
        before = tracking.status()["recorded"]
        fn()
        return tracking.status()["recorded"] - before - 1  # status() itself is one recorded call


def tax_table(repeats):
    if "monitoring" not in MODES:
        print("  monitoring mode: SKIPPED — sys.monitoring needs Python 3.12+")
    records = []
    for wname, fn in WORKLOADS.items():
        fn()  # warm (specialisation, caches)
        best = best_ns(fn, {"off": contextlib.nullcontext, **{
            f"{mode}/{name}": t for mode in MODES for name, t in trackers(mode).items()}}, repeats)
        for mode in MODES:
            calls = count_calls(mode, fn)
            off = best["off"] / calls
            records.append({"workload": wname, "mode": mode, "calls": calls, "off_ns": off,
                            "tax_ns": {name: best[f"{mode}/{name}"] / calls - off
                                       for name in trackers(mode)}})
    print(page_table("tracking", 3, tax=records))
    for r in records:
        callsite_tax, lean, _ = r["tax_ns"].values()
        print(f"  target (callsite tax <= 50% of the lean Python tax), {r['mode']}, "
              f"{r['workload']}: {'met' if callsite_tax / lean <= 0.5 else 'NOT met'} "
              f"({callsite_tax / lean:.0%})")
    return records


def filtered_tax_table(repeats, lib, flt):
    """The tax with a recording filter on calls made from excluded (library) code: monitoring
    switches those sites off (DISABLE), profile mode still runs its function on each event."""
    fn = lambda: lib["fib"](18)  # noqa: E731
    fn()
    best = best_ns(fn, {"off": contextlib.nullcontext, **{
        mode: functools.partial(tracking.enable, mode=mode, window=8, filter=flt)
        for mode in MODES}}, repeats)
    calls = count_calls("profile", fn)
    records = [{"workload": "fib(18) in library code, recording filter drops it", "mode": mode,
                "calls": calls, "off_ns": best["off"] / calls,
                "tax_ns": (best[mode] - best["off"]) / calls} for mode in MODES]
    print(markdown_table(["workload", "mode", "calls", "off ns/call", "callsite tax", "slowdown"], [
        (r["workload"], r["mode"], f"{calls:,}", fmt_ns(r["off_ns"]), fmt_ns(r["tax_ns"]),
         fmt_ratio(best[r["mode"]] / best["off"])) for r in records]))
    return records


# --- query cost -----------------------------------------------------------------------------

QUERIES = {
    "window: capture(source='window', limit=1)": "capture(source='window', limit=1)",
    "window: tracking.last()": "last()",
    "walk: Filter.first_user_frame()": "flt.first_user_frame()",
    "walk: capture(filter=f, limit=1)": "capture(filter=flt, limit=1)",
    "walk: capture(filter=f) (limit 10, MLIR-like)": "capture(filter=flt)",
    "empty loop": "pass",
}


def query_loops(flt) -> dict:
    """One timing loop per query, each in a module file `flt` excludes: every frame above the
    user's is a library frame, the loop's included."""
    ns = {"flt": flt, "capture": callsite.capture, "last": tracking.last}
    loops = {}
    for name, stmt in QUERIES.items():
        module = compile_statement(stmt, ns, name)
        flt.exclude_file(module["__file__"])
        loops[name] = module["loop"]
    return loops


def user_descend(k, lib_frames, lib, fn, arg):
    # User frames: the kept part of the stack; the last one calls into the library.
    if k > 0:
        return user_descend(k - 1, lib_frames, lib, fn, arg)
    return lib["descend"](lib_frames - 1, fn, arg)


def _measure(result, depth, lib_frames, lib, fn, arg, window_filter, mode):
    """fn(arg) as the first frame of a fresh thread runs it: with exactly `depth` frames on the
    stack, fn's included; the top `lib_frames` + fn are library frames, the rest below them
    user frames (and this entry)."""
    try:
        user = depth - stack_depth() - lib_frames - 1  # user_descend frames
        if user < 1 or lib_frames < 1:
            raise ValueError(f"depth {depth} too shallow for this harness")
        with (tracking.enable(mode=mode, window=8, filter=window_filter)
              if window_filter is not None else contextlib.nullcontext()):
            result.set(user_descend(user - 1, lib_frames, lib, fn, arg))
    except BaseException as e:
        result.set(e)


def query_table(repeats, quick, lib, flt):
    loops = query_loops(flt)
    mode = tracking.available_modes()["auto"]
    n = 2000 if quick else 20000
    records = []
    for depth in (5, 20, 200):
        for placement, lf in (("user frame just below", 1), ("user frame at the bottom", depth - 4)):
            def run(name, n):
                wf = flt if name.startswith("window") else None
                return run_in_fresh_thread(_measure, depth, lf, lib, loops[name], n, wf, mode)

            best = minima(round_robin(run, loops, repeats=repeats, iterations=n))
            # All methods must name the same user call site.
            tb, frame = run_in_fresh_thread(_measure, depth, lf, lib, lib["both"], None, flt, mode)
            if not (len(tb) == 1 and tb[0].code is frame.code and tb[0].lineno == frame.lineno):
                raise SystemExit(f"depth {depth}, {placement}: the window and the walk name "
                                 "different call sites")
            records.append({"depth": depth, "placement": placement, "library_frames": lf,
                            "ns": best})
    print(page_table("tracking-query", 1, query={"mode": mode, "rows": records}))
    print(f"  window mode: {mode}, recording filter = the query filter; the walk runs with "
          "tracking off. Times include the timing loop's own cost.")
    return {"mode": mode, "rows": records}


def main():
    ap = _common.parser(__doc__, repeats=7, quick="3 repeats, 2,000 queries per repeat")
    args = ap.parse_args()
    repeats = 3 if args.quick else args.repeats
    print(f"# callsite tracking benchmark — {_common.environment_line()}")
    print(f"callsite backend={callsite.get_backend()}; repeats={repeats} (min kept)\n")
    flt = callsite.Filter()
    lib = exec_as_module(LIBRARY, {"capture": callsite.capture, "flt": flt}, "tracking library")
    flt.exclude_file(lib["__file__"])
    print("## Tax per call (ns; tax = ns/call with the tracker minus ns/call without)\n")
    tax = tax_table(repeats)
    print("\n## Tax per call on calls from excluded code (recording filter)\n")
    filtered = filtered_tax_table(repeats, lib, flt)
    print("\n## Query cost (ns per query; the walk runs with tracking off)\n")
    query = query_table(repeats, args.quick, lib, flt)
    if args.json:
        _common.write_results(args.json, "tracking", {
            "python": sys.version.split()[0], "repeats": repeats,
            "modes": tracking.available_modes(), "tax": tax, "filtered_tax": filtered,
            "query": query})


if __name__ == "__main__":
    main()
