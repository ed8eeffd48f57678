# bench/bench_capture.py — capture and capture+symbolize: callsite (both backends) vs the peers.
"""Times stack capture at several depths, and capture+symbolize with cold and warm caches.

Run:  PYTHONPATH=build/<dir>/pkg python bench/bench_capture.py [--json out.json]
(the docs page's table and figure across versions are drawn from such files: docs/_ext/)

Every measurement runs in a fresh `_thread` thread on a stack built by real recursion to
exactly the stated depth (the frames counted by each method are printed as a check). Each
method's statement is compiled into its own loop (no per-iteration Python call), calibrated to
~20 ms per repeat, repeated round-robin, and the minimum is kept. Nothing is subtracted: the
cost of the benchmark loop itself is the "loop overhead" row, and the cold table includes the
timer pair (its own row). Per-frame costs are slopes between depths.
"""
from __future__ import annotations

import functools
import os
import statistics
import sys
import types
from dataclasses import dataclass

import callsite
from callsite._cli.peers import Peer, Skip, report_peers
from callsite._cli.stacks import at_depth_in_fresh_thread, run_in_fresh_thread
from callsite._cli.tables import fmt_noise, fmt_ns, fmt_ratio, markdown_table
from callsite._cli.timing import clock, compile_statement, round_robin, time_at_depth

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

DEPTHS = (5, 20, 50, 200)
BASELINE = "callsite (internal)"


@dataclass
class Method:
    """One row: a statement leaving its result in `_r`, the names it needs, and how to count
    the frames of its result."""

    name: str
    peer: Peer
    stmt: str
    count: object = len  # _r -> frames seen, or None for reference rows
    backend: str | None = None  # callsite backend to select before timing
    note: str = ""


# --- peers --------------------------------------------------------------------------------

def probe_callsite_internal():
    """The internal backend's rows are skipped, with the reason, where callsite refuses it."""
    if (refusal := callsite.internal_backend_refusal()) is not None:
        raise Skip(f"callsite refuses its internal backend here: {refusal}")
    return {"capture": callsite.capture}


def probe_stdlib():
    import inspect
    import traceback
    return {"_getframe": sys._getframe, "extract_stack": traceback.extract_stack,
            "StackSummary": traceback.StackSummary, "walk_stack": traceback.walk_stack,
            "stack": inspect.stack, "is_finalizing": sys.is_finalizing}


JAX_NOTES: list[str] = []


def probe_jax():
    import jaxlib  # not installed: the skip names the ImportError (Peer.available)
    try:
        from jaxlib import _jax
    except ImportError:
        raise Skip(f"jaxlib {jaxlib.__version__} has no jaxlib._jax (0.6+ has)") from None
    # Capture can be switched off: the run says whether it was on by default.
    default = _jax.tracebacks_enabled()
    _jax.set_tracebacks_enabled(True)
    JAX_NOTES.append(f"jaxlib {jaxlib.__version__}: jaxlib._jax.Traceback; tracebacks "
                     f"{'enabled' if default else 'DISABLED (enabled for the bench)'} by default")
    if _jax.Traceback.get_traceback() is None:
        raise Skip("jaxlib Traceback.get_traceback() returned None even when enabled")
    return {"get_traceback": _jax.Traceback.get_traceback}


def probe_torch():
    try:
        import torch
        from torch.utils._traceback import CapturedTraceback
    except ImportError as e:
        raise Skip(f"torch is not installed in this environment ({e}); only the 3.11 "
                     "bench venv has the local CPU wheel")
    if CapturedTraceback.extract().summary() is None:
        raise Skip(f"torch {torch.__version__}: CapturedTraceback.extract() gave no summary")
    return {"extract": CapturedTraceback.extract, "torch_version": torch.__version__}


CALLSITE = Peer("callsite", lambda: {"capture": callsite.capture})
CALLSITE_INTERNAL = Peer("callsite's internal backend", probe_callsite_internal)
STDLIB = Peer("stdlib (sys, traceback, inspect)", probe_stdlib)
JAX = Peer("jaxlib Traceback", probe_jax)
TORCH = Peer("torch CapturedTraceback", probe_torch)
PEERS = (CALLSITE, CALLSITE_INTERNAL, STDLIB, JAX, TORCH)

# A sys._getframe loop collecting (code, offset) per frame: the strongest pure-Python form,
# inlined in the timed loop.
GETFRAME_LOOP = """
f = _getframe()
_r = []
while f is not None:
    _r.append((f.f_code, f.f_lasti))
    f = f.f_back
"""


LOOP_OVERHEAD = Method("loop overhead: sys.is_finalizing()", STDLIB, "_r = is_finalizing()",
                       count=None, note="reference: the benchmark loop calling a trivial C function")
CAPTURE_METHODS = [
    Method(BASELINE, CALLSITE_INTERNAL, "_r = capture()", backend="internal"),
    Method("callsite (public)", CALLSITE, "_r = capture()", backend="public"),
    Method("sys._getframe loop (f_code, f_lasti)", STDLIB, GETFRAME_LOOP),
    Method("traceback.extract_stack()", STDLIB, "_r = extract_stack()"),
    Method("StackSummary.extract(walk_stack(None), lookup_lines=False)", STDLIB,
           "_r = StackSummary.extract(walk_stack(None), lookup_lines=False)"),
    Method("inspect.stack(0)", STDLIB, "_r = stack(0)"),
    Method("jaxlib Traceback.get_traceback()", JAX, "_r = get_traceback()",
           count=lambda r: len(r.frames)),
    Method("torch CapturedTraceback.extract()", TORCH, "_r = extract()",
           count=lambda r: len(r.summary())),
    LOOP_OVERHEAD,
]

# callsite's capture + symbolize, beside what every row of its table includes: the loop (warm)
# or the timer pair (cold).
SYMBOLIZED = Method("callsite (internal) .frames", CALLSITE_INTERNAL, "_r = capture().frames",
                    backend="internal")
TIMER_PAIR = Method("timer pair only", STDLIB, "_r = None", count=None,
                    note="reference: perf_counter_ns() twice, included in every row")

#: Each table (--tables) in the order it runs and is written: its title and its rows, the
#: first the one its ratios are against.
TABLE_RUNS = {
    "capture": ("capture only (ns per capture, result deallocated)", CAPTURE_METHODS),
    "warm": ("capture + symbolize, warm cache (same code objects every time)",
             [SYMBOLIZED, LOOP_OVERHEAD]),
    "cold": ("capture + symbolize, cold cache (fresh code objects for every sample; only the "
             "outermost frame is reused)", [SYMBOLIZED, TIMER_PAIR]),
}
TABLES = tuple(TABLE_RUNS)


# --- running --------------------------------------------------------------------------------

def run_table(kind: str, methods: list[Method], depths, args) -> dict:
    """{depth: {method: {"ns", "spread", "frames"} or {"skipped": reason}}}."""
    fns = {m.name: compile_statement(m.stmt, m.peer.ns, m.name) for m in methods
           if m.peer.available()}
    # What selects a callsite row's backend in its timed thread, before the row and its probe
    # (set_backend raises RuntimeError where the backend is refused).
    before = {m.name: functools.partial(callsite.set_backend, m.backend) for m in methods
              if m.backend is not None}
    table = {}
    # A cold stack's outermost frame is the only one not fresh: it needs two.
    for depth in (d for d in depths if kind != "cold" or d >= 2):
        if kind == "cold":
            timings = time_cold({n: f["once"] for n, f in fns.items()}, depth,
                                repeats=args.repeats, samples=args.cold_samples, before=before)
        else:
            timings = time_at_depth({n: f["loop"] for n, f in fns.items()}, depth,
                                    repeats=args.repeats, target_ns=args.target_ms * 1e6,
                                    before=before)
        # The frames in each result: the check that the stack has the stated depth.
        table[depth] = {m.name: {"skipped": m.peer.reason} if m.name not in fns else {
            "ns": timings[m.name].best, "spread": timings[m.name].noise,
            "frames": None if m.count is None else m.count(at_depth_in_fresh_thread(
                depth, fns[m.name]["probe"], before=before.get(m.name)))} for m in methods}
        print(f"  [{kind}] depth {depth} done", file=sys.stderr, flush=True)
    return table


# --- cold stacks ------------------------------------------------------------------------------

def fresh_function(fn: types.FunctionType) -> types.FunctionType:
    """A copy of fn with a new code object (no co_extra, never seen by any cache)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)


def _cold_chain_step(k, chain, leaf, clock_):
    # Template: every frame of a cold stack is a fresh copy of this (see fresh_function).
    if k < len(chain):
        return chain[k](k + 1, chain, leaf, clock_)
    return leaf(clock_)


def _cold_entry(result, depth, once, samples, before):
    # This entry is frame 1 (the only frame not fresh); frames 2..depth-1 are fresh chain
    # steps and frame `depth` is a fresh copy of once(), which times the operation.
    try:
        if before:
            before()
        total = 0
        for _ in range(samples):
            chain = [fresh_function(_cold_chain_step) for _ in range(depth - 2)]
            leaf = fresh_function(once)
            total += chain[0](1, chain, leaf, clock) if chain else leaf(clock)
            del chain, leaf
        result.set(total / samples)
    except BaseException as e:
        result.set(e)


def time_cold(onces: dict, depth: int, *, repeats: int, samples: int, before: dict) -> dict:
    """ns per single timed operation on a stack of `depth` frames whose code objects (all but
    the outermost) are new for every sample, so every per-code cache starts cold. The timer
    pair's own cost is included (a row of its own: a `once` doing nothing)."""
    return round_robin(lambda name, _n: run_in_fresh_thread(
        _cold_entry, depth, onces[name], samples, before.get(name)), onces, repeats=repeats)


# --- reporting ------------------------------------------------------------------------------

def print_table(title: str, table: dict, methods: list[Method]) -> None:
    print(f"\n### {title}\n")
    baseline = methods[0].name
    measured = [m for m in methods if m.peer.available()]
    rows = []
    for depth, row in table.items():
        base = row.get(baseline, {}).get("ns")
        for m in measured:
            r = row[m.name]
            rows.append((depth, m.name, "—" if r["frames"] is None else r["frames"],
                         fmt_ns(r["ns"]), fmt_ratio(r["ns"] / base if base else None),
                         fmt_noise(r["spread"])))
    print(markdown_table(("depth", "method", "frames", "ns/capture", f"× {baseline}",
                            "noise"), rows, align="rlrrrr"))
    for m in methods:
        if m not in measured:
            print(f"\nskipped {m.name}: {m.peer.reason}")
        elif m.note:
            print(f"\n{m.name}: {m.note}")


def per_frame(table: dict, name: str) -> dict:
    """ns per extra frame: the slope between each two depths, and the least-squares "fit"."""
    depths = [d for d in table if "ns" in table[d][name]]
    ns = [table[d][name]["ns"] for d in depths]
    out = {f"{a}→{b}": (y - x) / (b - a) for a, b, x, y in zip(depths, depths[1:], ns, ns[1:])}
    if len(depths) >= 2:
        out["fit"] = statistics.linear_regression(depths, ns).slope
    return out


def print_per_frame(table: dict, methods: list[Method]) -> dict:
    print("\n### ns per extra frame (slope between depths; 'fit' = least squares over all)\n")
    result = {m.name: per_frame(table, m.name) for m in methods
              if m.count is not None and m.peer.available()}
    print(markdown_table(("method", *next(iter(result.values()), {})),
                         [(name, *(f"{v:.1f}" for v in pf.values())) for name, pf in result.items()]))
    return result


def print_targets(table: dict, pf: dict, depth: int = 20) -> None:
    """The design's targets at `depth` (docs/benchmarks.md states them): each PASS, FAIL, or not
    measured and why."""
    print()
    row, base = table.get(depth, {}), table.get(depth, {}).get(BASELINE, {})
    for peer, want in (("sys._getframe loop (f_code, f_lasti)", 20),
                       ("jaxlib Traceback.get_traceback()", 5)):
        r = row.get(peer, {})
        if "ns" not in r or "ns" not in base:
            print(f"target ≥{want}× vs {peer}: not measured "
                  f"({r.get('skipped') or base.get('skipped')})")
            continue
        got = r["ns"] / base["ns"]
        print(f"target ≥{want}× faster than {peer} at depth {depth}: {got:.2f}× "
              f"{'PASS' if got >= want else 'FAIL'}")
    fit = pf.get(BASELINE, {}).get("fit")
    if fit is not None:
        print(f"target ≤3 ns per extra frame (least-squares fit, callsite internal): "
              f"{fit:.2f} ns {'PASS' if fit <= 3 else 'FAIL'}")


def header() -> None:
    print(f"## callsite capture benchmark — {_common.environment_line()}\n")
    print(f"callsite {callsite.__version__} from {os.path.dirname(callsite.__file__)}; layout "
          f"{callsite.layout_name}")
    report_peers(PEERS)
    # The timed statements live in real module files, like user code: inspect.getmodule()
    # finds them in its cache instead of rescanning sys.modules per frame.
    print(f"  {len(sys.modules)} modules imported")
    for n in JAX_NOTES:
        print(f"  {n}")
    if TORCH.available():
        print(f"  torch {TORCH.ns['torch_version']}")
    print("\nns: minimum over repeats of the mean per operation; noise: (median − min)/min over "
          "the repeats; frames: frames in the result (sanity check of the depth); gc disabled "
          "while timing; every stack is built by real recursion in a fresh thread.")


def main(argv=None) -> int:
    ap = _common.parser(__doc__, repeats=7,
                        quick="5 ms per repeat, 30 cold samples (numbers indicative)")
    ap.add_argument("--depths", type=_common.counts, default=list(DEPTHS))
    ap.add_argument("--target-ms", type=float, default=20.0, help="time per repeat")
    ap.add_argument("--cold-samples", type=_common.count, default=100,
                    help="fresh stacks per cold repeat")
    ap.add_argument("--tables", type=_common.names(TABLES), default=list(TABLES))
    args = ap.parse_args(argv)
    if args.quick:
        args.target_ms, args.cold_samples = 5.0, 30
    if args.repeats < 5:
        print("note: fewer than 5 repeats — numbers are indicative only", file=sys.stderr)

    header()
    results = {"python": sys.version.split()[0], "jax_notes": JAX_NOTES, "tables": {}}
    for kind, (title, methods) in TABLE_RUNS.items():
        if kind in args.tables:
            results["tables"][kind] = table = run_table(kind, methods, args.depths, args)
            print_table(title, table, methods)
            if kind == "capture":
                results["per_frame"] = print_per_frame(table, methods)
    if "capture" in results["tables"]:
        print_targets(results["tables"]["capture"], results["per_frame"])
    if args.json:
        _common.write_results(args.json, "capture", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
