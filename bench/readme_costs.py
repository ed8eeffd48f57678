# bench/readme_costs.py — the README's cost rows, from the committed result files.
"""Prints the rows of the README's "What it costs" table that come from the result files under
docs/_data/benchmarks/ (tests/bench/test_bench_cold.py checks that the README carries them as
printed). Each row names its case: warm, first trace in a fresh process, second trace, or a new
``ir.Context`` per build; wall or process CPU time, and instructions (callgrind) where counted;
the Python versions of the files it spans. A range spans the files' versions, bindings, models
or kernel sizes; a time difference smaller than the clock resolves is said to be, not divided.

    python3 bench/readme_costs.py
"""
from __future__ import annotations

import statistics
from pathlib import Path

import _common  # this script's folder: the options every bench script spells alike

_common.use_docs_ext()  # the docs' reader of the files
from benchmark_data import below_clock, load_result, load_results, minor, python_key  # noqa: E402

RESULTS = Path(_common.REPO, "docs", "_data", "benchmarks")


def factor(x: float) -> str:
    """A ratio far from 1: two significant digits (490, 35, 8.5)."""
    if x < 10:
        return f"{x:.1f}"
    return f"{float(f'{x:.2g}'):.0f}"  # .2g's digits, without its exponent (4.9e+02)


near_one = "{:.2f}".format  # a ratio near 1 (a build against one without locations)


def span(values: list[float], fmt=factor) -> str:
    low, high = fmt(min(values)), fmt(max(values))
    return low if low == high else f"{low}–{high}"


def versions(runs: list[dict]) -> str:
    """The Python versions the runs span: "3.11" or "3.10–3.13"."""
    return span([python_key(r) for r in runs], lambda key: ".".join(map(str, key)))


def spread(samples: list[float]) -> float:
    """The clock's noise in one mode: (median − min) / min over the repeats (callsite's
    timing.noise, which a plain python3 without a build cannot import)."""
    return (statistics.median(samples) - min(samples)) / min(samples)


# --- warm rows: capture, an MLIR op, real DSLs, the kernel boundary ---------------------------

CAPTURE_PEERS = (("a `sys._getframe` loop collecting `(f_code, f_lasti)`",
                  "sys._getframe loop (f_code, f_lasti)"),
                 ("`traceback.extract_stack()`", "traceback.extract_stack()"))


def capture_rows(runs: list[dict]) -> list[str]:
    """One row: callsite.capture() against each peer at depth 20."""
    faster = []
    for _, method in CAPTURE_PEERS:
        ratios = []
        for run in runs:
            row = run["tables"]["capture"]["20"]
            if "ns" in row.get(method, {}):
                ratios.append(row[method]["ns"] / row["callsite (internal)"]["ns"])
        faster.append(f"{span(ratios)}×")
    return [f"| capture the stack, 20 frames | warm; wall time; {versions(runs)} | "
            f"{' and '.join(label for label, _ in CAPTURE_PEERS)} | "
            f"{' and '.join(faster)} faster |"]


A, B, C = "(a) Location.unknown()", "(b) MLIR loc_tracebacks()", "(c) callsite auto_locations"


def mlir_op_row(runs: list[dict]) -> str:
    walked = [(run, m) for run in runs for m in run["bindings"].values() if B in m.get("ops_ns", {})]
    counted = [(run, m) for run, m in walked if B in m.get("instructions_per_op", {})]
    mlir = [m["ops_ns"][B] / m["ops_ns"][A] for _, m in walked]
    ours = [m["ops_ns"][C] / m["ops_ns"][A] for _, m in walked]
    ir = [m["instructions_per_op"] for _, m in counted]
    added = [(c[B] - c[A]) / (c[C] - c[A]) for c in ir]
    timed, counted_in = versions([r for r, _ in walked]), versions([r for r, _ in counted])
    case = (f"wall time and instructions; {timed}" if timed == counted_in
            else f"wall time, {timed}; instructions, {counted_in}")
    return (f"| build MLIR ops with locations | warm; {case} | MLIR's `loc_tracebacks()`: "
            f"{span(mlir)}× the time of ops without locations | {span(ours, near_one)}× the time, "
            f"{span([c[C] / c[A] for c in ir], near_one)}× the instructions, {span(added)}× fewer "
            f"added than MLIR's walk |")


def dsl_row(run: dict) -> str:
    resolved, below = [], []
    for d in run["dsls"].values():
        if "skipped" in d:
            continue
        t, share = d[run["measure"]], below_clock(d, run["measure"])
        if share is None:
            resolved.append((d["label"], (t["mlir"] - t["none"]) / (t["callsite"] - t["none"])))
        else:
            below.append((d["label"].split(" (")[0], share))
    names = ", ".join(label for label, _ in resolved)
    under = ""
    if below:
        under = (f" ({' and '.join(label for label, _ in below)}: callsite adds "
                 f"{' and '.join(f'{s:.1%}' for _, s in below)} of a build, below what the "
                 f"clock resolves)")
    return (f"| build a real DSL's design: {names} | warm; CPU time; {minor(run)} | MLIR's "
            f"`loc_tracebacks()`: the time it adds per build | "
            f"{span([r for _, r in resolved])}× less{under} |")


def boundary_row(runs: list[dict]) -> str:
    """Each side's added time per op, then their ratio: callsite's part is the difference of two
    op timings of a few microseconds, so the ratio moves with the machine's noise; the added
    times say what it bounds."""
    ratios, walks, ours_added, used = [], [], [], []
    for run in runs:
        for m in run["bindings"].values():
            b = m.get("boundary_ns", {})
            walk = b.get("ops, MLIR loc_tracebacks(max_depth=40)")
            none, ours = b.get("ops, Location.unknown()"), b.get("ops, callsite boundary")
            if walk and none and ours and ours > none:
                ratios.append((walk - none) / (ours - none))
                walks.append((walk - none) / 1000)
                ours_added.append((ours - none) / 1000)
                used.append(run)
    micro = lambda v: f"{v:.1f}" if v < 10 else f"{v:.0f}"  # noqa: E731
    return (f"| an op's location in a kernel run under a 200-frame program | warm; wall time; "
            f"{versions(used)} | MLIR's walk limited to 40 frames: {span(walks, micro)} µs added "
            f"per op | {span(ours_added, micro)} µs added per op, {span(ratios)}× less (callsite's "
            f"part is the difference of two op timings: the ratio moves with the machine's "
            f"noise) |")


# --- cold rows: torch's first trace and its second, a new MLIR Context ------------------------

def torch_rows(timed: dict, counted: dict) -> list[str]:
    rows = [r for r in timed["rows"] if r["path"] == "first"]
    counts = [r["instructions"] for r in counted["rows"]
              if r["path"] == "first" and "skipped" not in r.get("instructions", {"skipped": 1})]
    frames = span([r["frames"]["mean"] for r in rows])
    out = []
    for run, label, case in (
            ("first", f"a torch.fx node's `stack_trace`, library-depth models ({frames} frames)",
             "first trace in a fresh process"),
            ("again", "the same models traced again", "second trace in that process")):
        med = [r[run]["median"] for r in rows]
        # bench_torch.py's noise per mode: (median − min) / min over the repeats
        noise = max(r[run]["noise"]["callsite"] for r in rows)
        resolved = all(m["callsite_added_s"] / m["none_s"] > max(
            r[run]["noise"][mode] for mode in ("none", "callsite")) for r, m in zip(rows, med))
        clock = (f"{span([m['added_ratio'] for m in med])}× less time added" if resolved else
                 f"the trace takes {span([m['callsite_vs_none'] for m in med], near_one)}× "
                 f"(callsite's part within the clock's noise, up to {noise:.0%})")
        out.append(f"| {label} | {case}; CPU time (medians of {timed['repeats']}) and "
                   f"instructions; {minor(timed)} | torch's own walk: the trace takes "
                   f"{span([m['torch_vs_none'] for m in med])}× one without stack "
                   f"traces | {clock}; {span([c[run]['added_ratio'] for c in counts])}× fewer "
                   f"instructions added per node |")
    return out


def mlir_context_rows(result: dict) -> list[str]:
    measured = result["bindings"]["iree.compiler.ir"]
    ir = measured["contexts_ir_per_build"]["sizes"]
    wall = measured["contexts_s_per_build"]
    sizes = sorted(ir, key=int)
    out = []
    for kind, label, case in (
            ("new", f"an MLIR kernel's op locations, a new `ir.Context` per kernel "
                    f"({'/'.join(sizes)} ops)", "new Context per build"),
            ("one", "the same kernels, one `ir.Context`", "warm")):
        counts = [(ir[ops][f"b/{kind}"] - ir[ops][f"a/{kind}"]) /
                  (ir[ops][f"c/{kind}"] - ir[ops][f"a/{kind}"]) for ops in sizes]
        timed, unresolved = [], []
        for ops in sizes:
            entry = wall["sizes"][ops]
            a, b, c = (entry["median"][f"{m}/{kind}"] for m in "abc")
            noise = max(spread(entry["samples_s"][f"{m}/{kind}"]) for m in "ac")
            (timed if (c - a) / a > noise else unresolved).append((ops, (b - a) / (c - a)))
        clock = f"{span([r for _, r in timed])}× less time added" if timed else ""
        if timed and unresolved:
            clock += (f" at {'/'.join(o for o, _ in timed)} ops ("
                      f"{'/'.join(o for o, _ in unresolved)} ops: within the clock's noise)")
        elif unresolved:
            clock = "callsite's added time within the clock's noise"
        out.append(f"| {label} | {case}; CPU time (medians of {wall['repeats']}) and "
                   f"instructions; {minor(result)} | MLIR's `loc_tracebacks()` | {clock}; "
                   f"{span(counts)}× fewer instructions added |")
    return out


def readme_rows(folder: str | Path = RESULTS) -> list[str]:
    """Every README cost row drawn from the result files in `folder` (and its cold/), in the
    README's order."""
    runs, cold = load_results(Path(folder)), Path(folder, "cold")
    return [*capture_rows(runs["capture"]), mlir_op_row(runs["mlir"]), dsl_row(runs["dsls"][0]),
            boundary_row(runs["mlir"]),
            *torch_rows(load_result(cold / "torch-first-py3.11.json"),
                        load_result(cold / "torch-first-callgrind-py3.11.json")),
            *mlir_context_rows(load_result(cold / "mlir-contexts-py3.11.json"))]


def main() -> None:
    _common.parser(__doc__.split("\n\n")[0], json=False).parse_args()  # --help
    print("\n".join(readme_rows()))


if __name__ == "__main__":
    main()
