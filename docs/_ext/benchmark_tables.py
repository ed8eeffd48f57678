"""The benchmarks page's tables, computed from the result files (benchmark_data.py).

Each function takes the loaded results and returns (header, rows) of plain strings; cells
wrapped in backticks are shown as code. ``TABLES`` maps a table's name to its function.
"""
from __future__ import annotations

from typing import Callable

from benchmark_data import describe_date, describe_machine, minor

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
    methods: dict[str, None] = {}
    for run in runs:
        for method in run["tables"]["capture"].get(CAPTURE_DEPTH, {}):
            methods.setdefault(method, None)
    rows = []
    for method in methods:
        cells = [CAPTURE_LABELS.get(method, method)]
        for run in runs:
            row = run["tables"]["capture"].get(CAPTURE_DEPTH, {})
            value = row.get(method, {}).get("ns")
            base = row.get(CAPTURE_BASELINE, {}).get("ns")
            cells.append("—" if value is None else
                         f"{ns(value)} ({ratio(value / base)})" if base else ns(value))
        rows.append(cells)
    for kind, label in (("warm", "callsite + `.frames`, warm"),
                        ("cold", "callsite + `.frames`, cold")):
        cells = [label]
        for run in runs:
            cell = run["tables"].get(kind, {}).get(CAPTURE_DEPTH, {}).get(
                "callsite (internal) .frames", {})
            cells.append(ns(cell.get("ns")))
        rows.append(cells)
    fits = ["callsite (internal), ns per extra frame"]
    for run in runs:
        fit = run.get("per_frame", {}).get(CAPTURE_BASELINE, {}).get("fit")
        fits.append("—" if fit is None else f"{fit:.2f}")
    rows.append(fits)
    return ["method \\ Python", *(minor(run) for run in runs)], rows


# bench_mlir's mode labels, short enough for a column header.
MLIR_MODE_HEADERS = {
    "(a) Location.unknown()": "(a) unknown",
    "(b) MLIR loc_tracebacks()": "(b) MLIR",
    "(c) callsite auto_locations": "(c) callsite auto",
    "(d) callsite loc=location()": "(d) `loc=location()`",
    "(c') Python wrapper of OpView.__init__": "(c′) Python wrapper",
}


def _mlir_measured(results: dict[str, list[dict]], field: str):
    """(row label, that field's figures by mode) for each bindings of each MLIR run that has it."""
    for run in results["mlir"]:
        for name, measured in run["bindings"].items():
            figures = measured.get(field)
            if figures:
                yield f"{minor(run)}, {name.split('.')[0]}", figures


def _against_none_and_mlir(figures: dict) -> list[str]:
    """(c)/(a), callsite's build against none, and (b−a)/(c−a), how many times what MLIR's walk
    adds is what callsite's adds."""
    a = figures.get("(a) Location.unknown()")
    b = figures.get("(b) MLIR loc_tracebacks()")
    c = figures.get("(c) callsite auto_locations")
    return [f"{c / a:.3f}" if a and c else "—",
            ratio((b - a) / (c - a)) if a and b and c and c > a else "—"]


def mlir_table(results: dict[str, list[dict]]) -> Table:
    """Scenario 1 per Python version and bindings: ns per op in each mode."""
    modes: dict[str, None] = {}
    for _, ops in _mlir_measured(results, "ops_ns"):
        for mode in ops:
            modes.setdefault(mode, None)
    rows = [[label, *(ns(ops[m]) if m in ops else "no walk" for m in modes),
             *_against_none_and_mlir(ops)]
            for label, ops in _mlir_measured(results, "ops_ns")]
    return ["Python, bindings", *(MLIR_MODE_HEADERS.get(m, m) for m in modes), "(c)/(a)",
            "(b−a)/(c−a)"], rows


def mlir_instructions_table(results: dict[str, list[dict]]) -> Table:
    """Scenario 1 in instructions per op (callgrind), where the run counted them."""
    modes = ("(a) Location.unknown()", "(b) MLIR loc_tracebacks()", "(c) callsite auto_locations",
             "(d) callsite loc=location()")
    rows = [[label, *("no walk" if counts.get(m) is None else f"{counts[m]:,.0f}" for m in modes),
             *_against_none_and_mlir(counts)]
            for label, counts in _mlir_measured(results, "instructions_per_op")]
    return ["Python, bindings", "(a) Ir/op", "(b) MLIR", "(c) callsite auto", "(d) `loc=location()`",
            "(c)/(a)", "(b−a)/(c−a)"], rows


#: bench_dsls.py's CPU time per build does not resolve a difference below this share of a build
#: on the benchmark machine (docs/benchmarks.md, "Real DSLs"; bench/readme_costs.py's too).
DSL_CLOCK_RESOLUTION = 0.05


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
            added = dd - a
            if not per_op and added / a < DSL_CLOCK_RESOLUTION:
                # A ratio of a difference the clock does not resolve would be noise.
                below = (f"below the clock's resolution (callsite's part: {added / a:.1%} of a "
                         f"build)")
                rows.append([label, str(n), show(a), show(b) if b is not None else "—", show(c),
                             show(dd), f"{dd / a:.3f}", below, "—"])
                continue
            rows.append([label, str(n), show(a), show(b) if b is not None else "—", show(c),
                         show(dd), f"{dd / a:.3f}",
                         ratio((c - a) / added) if added > 0 else "callsite adds nothing measurable",
                         ratio((b - a) / added) if b is not None and added > 0 else "—"])
    unit = "Ir/op" if any(r["measure"] == "instructions_per_build" for r in results["dsls"]) else "ms"
    return ["DSL (Python)", "ops", f"(a) none, {unit}", "(b) DSL's own", "(c) MLIR",
            "(d) callsite", "d/a", "(c−a)/(d−a)", "(b−a)/(d−a)"], rows


def tracking_table(results: dict[str, list[dict]]) -> Table:
    """The tax per recorded call: callsite and the pure-Python trackers, per version."""
    rows = []
    for run in results["tracking"]:
        for r in run["tax"]:
            # bench_tracking names its trackers "callsite MODE (C)", "lean MODE (Python)", ...
            by_kind = {name.split()[0]: v for name, v in r["tax_ns"].items()}
            callsite_tax, lean, plain = (by_kind.get(k) for k in ("callsite", "lean", "plain"))
            rows.append([minor(run), r["workload"], r["mode"], f"{r['calls']:,}", ns(r["off_ns"]),
                         ns(callsite_tax), ns(lean), ns(plain),
                         ratio(callsite_tax / lean) if lean and callsite_tax is not None else "—"])
    return ["Python", "workload", "mode", "calls", "off ns/call", "callsite tax", "lean Python tax",
            "plain Python tax", "callsite/lean"], rows


def query_table(results: dict[str, list[dict]]) -> Table:
    """The most recent user frame: ns per query from the window and by walking, one row per
    stack shape (the loop's own cost included)."""
    queries: dict[str, None] = {}
    for run in results["tracking"]:
        for r in run["query"]["rows"]:
            for query in r["ns"]:
                if query != "empty loop":
                    queries.setdefault(query, None)
    rows = []
    for run in results["tracking"]:
        for r in run["query"]["rows"]:
            rows.append([minor(run), str(r["depth"]), str(r["library_frames"]),
                         *(ns(r["ns"].get(q)) for q in queries)])
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
    if name not in TABLES:
        raise ValueError(f"unknown benchmark table {name!r}; known: {', '.join(TABLES)}")
    bench, build = TABLES[name]
    if bench and not results.get(bench):
        raise ValueError(f"table {name!r} has no {bench!r} result files to read")
    return build(results)
