"""The benchmarks page's tables, computed from the result files (benchmark_data.py).

Each function takes the loaded results and returns (header, rows) of plain strings; cells
wrapped in backticks are shown as code. ``TABLES`` maps a table's name to its function.
"""
from __future__ import annotations

from typing import Callable

from benchmark_data import (below_clock, by_tracker, describe_date, describe_machine, minor,
                            ordered_union, runs_of)

Table = tuple[list[str], list[list[str]]]
CAPTURE_DEPTH = "20"
CAPTURE_BASELINE = "callsite (internal)"


def ns(value: float | None) -> str:
    if value is None:
        return "—"
    if value >= 10_000:
        return f"{value / 1000:,.1f} µs"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def ratio(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}×" if value >= 100 else f"{value:.1f}×" if value >= 10 else f"{value:.2f}×"


def runs_table(results: dict[str, list[dict]]) -> Table:
    """Every result file: which run produced it, when, on what, under which load."""
    rows = []
    for bench in sorted(results):
        for run in results[bench]:
            meta = run["meta"]
            # The commit measured (meta.commit), where the run recorded one.
            commit = meta.get("commit") or "not recorded"
            rows.append([f"`{run['_path'].name}`", minor(run), describe_date(meta),
                         describe_machine(meta), f"{meta['callsite'] or '—'} ({commit})",
                         f"`{meta['command']}`"])
    return ["file", "Python", "started", "machine", "callsite (commit)", "command"], rows


# bench_capture's method names, short enough for the first column (the page describes each).
CAPTURE_LABELS = {
    "sys._getframe loop (f_code, f_lasti)": "`sys._getframe` loop",
    "StackSummary.extract(walk_stack(None), lookup_lines=False)": "`StackSummary.extract(walk_stack())`",
    "traceback.extract_stack()": "`traceback.extract_stack()`",
    "inspect.stack(0)": "`inspect.stack(0)`",
    "jaxlib Traceback.get_traceback()": "jaxlib `get_traceback()`",
    "torch CapturedTraceback.extract()": "torch `CapturedTraceback.extract()`",
    "loop overhead: sys.is_finalizing()": "the loop alone",
}


def capture_table(results: dict[str, list[dict]]) -> Table:
    """Depth 20: ns per capture and, in brackets, times the internal callsite capture."""
    runs = results["capture"]

    def at_depth(run: dict, table: str = "capture") -> dict:
        return run["tables"].get(table, {}).get(CAPTURE_DEPTH, {})

    def against_baseline(run: dict, method: str) -> str:
        value, base = (at_depth(run).get(m, {}).get("ns") for m in (method, CAPTURE_BASELINE))
        return "—" if value is None else f"{ns(value)} ({ratio(value / base)})" if base else ns(value)

    rows = [[CAPTURE_LABELS.get(m, m), *(against_baseline(run, m) for run in runs)]
            for m in ordered_union(at_depth(run) for run in runs)]
    rows += [[f"callsite + `.frames`, {table}",
              *(ns(at_depth(run, table).get("callsite (internal) .frames", {}).get("ns"))
                for run in runs)] for table in ("warm", "cold")]
    fits = (run.get("per_frame", {}).get(CAPTURE_BASELINE, {}).get("fit") for run in runs)
    rows.append(["callsite (internal), ns per extra frame",
                 *("—" if fit is None else f"{fit:.2f}" for fit in fits)])
    return ["method \\ Python", *(minor(run) for run in runs)], rows


# bench_mlir's mode labels, short enough for a column header.
MLIR_MODE_HEADERS = {
    "(a) Location.unknown()": "(a) unknown",
    "(b) MLIR loc_tracebacks()": "(b) MLIR",
    "(c) callsite auto_locations": "(c) callsite auto",
    "(d) callsite loc=location()": "(d) `loc=location()`",
    "(c') Python wrapper of OpView.__init__": "(c′) Python wrapper",
}


def _mlir_table(results: dict[str, list[dict]], field: str, modes: list[str], cell) -> list:
    """A row per bindings of each MLIR run that measured `field`: its figure per mode ("no walk"
    where the bindings record none), (c)/(a), callsite's build against none, and (b−a)/(c−a),
    how many times what MLIR's walk adds is what callsite's adds."""
    rows = []
    for run in results["mlir"]:
        for name, measured in run["bindings"].items():
            figures = measured.get(field)
            if not figures:
                continue
            a, b, c = (figures.get(m) for m in list(MLIR_MODE_HEADERS)[:3])
            rows.append([f"{minor(run)}, {name.split('.')[0]}",
                         *("no walk" if figures.get(m) is None else cell(figures[m]) for m in modes),
                         f"{c / a:.3f}" if a and c else "—",
                         ratio((b - a) / (c - a)) if a and b and c and c > a else "—"])
    return rows


def mlir_table(results: dict[str, list[dict]]) -> Table:
    """Scenario 1 per Python version and bindings: ns per op in each mode."""
    modes = ordered_union(m.get("ops_ns") or {} for run in results["mlir"]
                          for m in run["bindings"].values())
    return (["Python, bindings", *(MLIR_MODE_HEADERS.get(m, m) for m in modes), "(c)/(a)",
             "(b−a)/(c−a)"], _mlir_table(results, "ops_ns", modes, ns))


def mlir_instructions_table(results: dict[str, list[dict]]) -> Table:
    """Scenario 1 in instructions per op (callgrind), where the run counted them."""
    modes = list(MLIR_MODE_HEADERS)[:4]
    return (["Python, bindings", "(a) Ir/op", *(MLIR_MODE_HEADERS[m] for m in modes[1:]),
             "(c)/(a)", "(b−a)/(c−a)"],
            _mlir_table(results, "instructions_per_op", modes, lambda v: f"{v:,.0f}"))


def dsls_table(results: dict[str, list[dict]]) -> Table:
    """Per DSL: the cost of one build in each mode, and the ratios of the added costs."""
    rows = []
    for run in results["dsls"]:
        per_op = run["measure"] == "instructions_per_build"
        for d in run["dsls"].values():
            label = f"{d['label']} ({minor(run)})"
            if "skipped" in d:
                rows.append([label, "—", f"not measured: {d['skipped']}", "", "", "", "", "", ""])
                continue
            t, n = d[run["measure"]], d["ops"]
            show = (lambda x: f"{x / n:,.0f}") if per_op else (lambda x: f"{x * 1e3:.2f}")
            a, c, dd, b = t["none"], t["mlir"], t["callsite"], t.get("own")
            added, share = dd - a, below_clock(d, run["measure"])
            if share is not None:  # a ratio of a difference the clock does not resolve is noise
                ratios = [f"below the clock's resolution (callsite's part: {share:.1%} of a "
                          f"build)", "—"]
            else:
                ratios = [ratio((c - a) / added) if added > 0 else "callsite adds nothing measurable",
                          ratio((b - a) / added) if b is not None and added > 0 else "—"]
            rows.append([label, str(n), show(a), show(b) if b is not None else "—", show(c),
                         show(dd), f"{dd / a:.3f}", *ratios])
    unit = "Ir/op" if any(r["measure"] == "instructions_per_build" for r in results["dsls"]) else "ms"
    return ["DSL (Python)", "ops", f"(a) none, {unit}", "(b) DSL's own", "(c) MLIR",
            "(d) callsite", "d/a", "(c−a)/(d−a)", "(b−a)/(d−a)"], rows


def tracking_table(results: dict[str, list[dict]]) -> Table:
    """The tax per recorded call: callsite and the pure-Python trackers, per version."""
    rows = []
    for run in results["tracking"]:
        for r in run["tax"]:
            taxes = by_tracker(r["tax_ns"])
            callsite_tax, lean, plain = (taxes.get(k) for k in ("callsite", "lean", "plain"))
            rows.append([minor(run), r["workload"], r["mode"], f"{r['calls']:,}", ns(r["off_ns"]),
                         ns(callsite_tax), ns(lean), ns(plain),
                         ratio(callsite_tax / lean) if lean and callsite_tax is not None else "—"])
    return ["Python", "workload", "mode", "calls", "off ns/call", "callsite tax", "lean Python tax",
            "plain Python tax", "callsite/lean"], rows


def query_table(results: dict[str, list[dict]]) -> Table:
    """The most recent user frame: ns per query from the window and by walking, one row per
    stack shape (the loop's own cost included)."""
    records = [(run, r) for run in results["tracking"] for r in run["query"]["rows"]]
    queries = [q for q in ordered_union(r["ns"] for _, r in records) if q != "empty loop"]
    rows = [[minor(run), str(r["depth"]), str(r["library_frames"]),
             *(ns(r["ns"].get(q)) for q in queries)] for run, r in records]
    # "window: tracking.last()" -> "`tracking.last()`" (window) : the header says which is which.
    names = [f"{q.split(': ', 1)[0]}: `{q.split(': ', 1)[-1].split(' (')[0]}`" for q in queries]
    return ["Python", "depth", "library frames above the user's", *names], rows


TABLES: dict[str, tuple[str, Callable[[dict[str, list[dict]]], Table]]] = {
    "runs": ("", runs_table),
    "capture": ("capture", capture_table),
    "mlir": ("mlir", mlir_table),
    "mlir-instructions": ("mlir", mlir_instructions_table),
    "dsls": ("dsls", dsls_table),
    "tracking": ("tracking", tracking_table),
    "tracking-query": ("tracking", query_table),
}


def table(name: str, results: dict[str, list[dict]]) -> Table:
    runs_of("table", TABLES, name, results)
    return TABLES[name][1](results)
