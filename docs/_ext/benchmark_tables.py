"""The benchmarks page's tables, computed from the result files (benchmark_data.py).

Each function returns (header, rows) of plain strings; cells wrapped in backticks are shown as
code. ``TABLES`` maps a table's name to its function of the loaded results; ``COLD_TABLES``
the tables that read one file, or one subfolder's files, below docs/_data/benchmarks/.
"""
from __future__ import annotations

from typing import Callable

from benchmark_data import (below_clock, by_tracker, describe_date, describe_machine, minor,
                            ordered_union, runs_of)
from callsite._cli.tables import fmt_ns as ns
from callsite._cli.tables import fmt_ratio as ratio
from callsite._cli.timing import noise

Table = tuple[list[str], list[list[str]]]
CAPTURE_DEPTH = "20"
CAPTURE_BASELINE = "callsite (internal)"


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


def _mlir_measured(results: dict[str, list[dict]], field: str) -> list[tuple[str, dict]]:
    """("3.X, bindings", figures) for each bindings of each MLIR run that measured `field`."""
    return [(f"{minor(run)}, {name.split('.')[0]}", measured[field])
            for run in results["mlir"] for name, measured in run["bindings"].items()
            if measured.get(field)]


def _mlir_table(results: dict[str, list[dict]], field: str, modes: list[str], cell) -> list:
    """A row per bindings of each MLIR run that measured `field`: its figure per mode ("no walk"
    where the bindings record none), (c)/(a), callsite's build against none, and (b−a)/(c−a),
    how many times what MLIR's walk adds is what callsite's adds."""
    rows = []
    for label, figures in _mlir_measured(results, field):
        a, b, c = (figures.get(m) for m in list(MLIR_MODE_HEADERS)[:3])
        rows.append([label,
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


def mlir_cases_table(results: dict[str, list[dict]], field: str,
                     cell: Callable[[object, dict], str] = lambda value, _: ns(value)) -> Table:
    """Scenarios 2–4: a row per bindings, a column per case that `field` names (but the baseline
    that scenario 2's cells subtract); `cell` formats a case's figure, given the row's."""
    measured = _mlir_measured(results, field)
    cases = [c for c in ordered_union(figures for _, figures in measured) if c != "(a) unknown"]
    return (["Python, bindings", *cases],
            [[label, *(cell(figures.get(c), figures) for c in cases)] for label, figures in measured])


def long_kernel_added(tenths: list[float] | None, figures: dict) -> str:
    """Scenario 2: ns a mode adds to an op over Location.unknown(), in the first tenth of one
    long kernel → in its last tenth."""
    if not tenths:
        return "no walk"
    none = figures["(a) unknown"]
    return f"{tenths[0] - none[0]:,.0f} → {tenths[-1] - none[-1]:,.0f}"


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
    "mlir-long-kernel": ("mlir", lambda r: mlir_cases_table(r, "long_kernel_ns_per_tenth",
                                                            long_kernel_added)),
    "mlir-one-location": ("mlir", lambda r: mlir_cases_table(r, "one_location_ns")),
    "mlir-boundary": ("mlir", lambda r: mlir_cases_table(r, "boundary_ns")),
    "dsls": ("dsls", dsls_table),
    "tracking": ("tracking", tracking_table),
    "tracking-query": ("tracking", query_table),
}


# --- the cold path: one result file per table ------------------------------------------------

def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def in_the_noise(text: str, part: float, spread: float) -> str:
    """`text`, marked when the part it measures (a share of the build) is smaller than the spread
    of the repeats: a ratio of such a difference is not read as a measurement."""
    return f"{text}, in the noise ({spread:.0%})" if part < spread else text


def torch_first_table(result: dict, paths: tuple[str, ...] = ("first",)) -> Table:
    """bench_torch.py's rows of `paths` (--paths first; make_fx, export): ms per build, first
    and again, median and min; a path column when there are several."""
    named = len(paths) > 1
    rows = []
    for row in (row for row in result["rows"] if row["path"] in paths):
        frames = row["frames"]
        label = f"{row['model']} ({row['nodes']}, {frames['mean']:.0f}/{frames['max']})"
        for run in ("first", "again"):
            # callsite's part against the spread of its own repeats.
            spread = row[run]["noise"]["callsite"]
            for stat in ("median", "min"):
                r = row[run][stat]
                added = ratio(r["added_ratio"])
                if r["added_ratio"] is not None:
                    added = in_the_noise(added, r["callsite_added_s"] / r["none_s"], spread)
                rows.append([*([row["path"]] if named else []), label, run, stat,
                             *(ms(r[f"{m}_s"]) for m in ("none", "torch", "callsite")),
                             f"{r['torch_added_us_per_node']:.1f} µs",
                             f"{r['callsite_added_us_per_node']:.1f} µs", added,
                             ratio(r["callsite_vs_none"]), ratio(r["torch_vs_none"])])
    return ([*(["path"] if named else []), "model (nodes, frames per capture mean/max)", "trace",
             "stat", "no stack traces", "torch's", "callsite's", "torch adds per node",
             "callsite adds per node", "torch's added / callsite's", "callsite / none",
             "torch / none"], rows)


def torch_compile_table(result: dict) -> Table:
    """bench_torch.py --paths compile: ms per compile, first and again, median and min, with
    dynamo's stack-trace block and with it skipped."""
    rows = []
    for row in (row for row in result["rows"] if row["path"] == "compile"):
        for run in ("first", "again"):
            spread = row[run]["noise"]["torch"]  # the block is part of torch's compile
            for stat in ("median", "min"):
                r = row[run][stat]
                share = r["stack_trace_share"]
                rows.append([f"{row['model']} ({row['nodes']})", run, stat, ms(r["torch_s"]),
                             ms(r["skipped_s"]), ms(r["stack_trace_s"]),
                             in_the_noise(f"{share:.1%}", share, spread)])
    return (["model (nodes)", "compile", "stat", "torch's", "stack-trace block skipped",
             "stack traces", "share of the compile"], rows)


def torch_instructions_table(rows: list[dict]) -> Table:
    """The callgrind counts of `bench_torch.py --paths first --callgrind[-only]` rows: each
    trace in a process of its own, only the trace collected."""
    out = []
    for row in rows:
        ins = row.get("instructions")
        if row["path"] != "first" or not ins or "skipped" in ins:
            continue
        n = ins["nodes"]
        for run in ("first", "again"):
            r = ins[run]
            # One decimal past 100 too: a ratio of two counts, which the page quotes so.
            added = "—" if r["added_ratio"] is None else f"{r['added_ratio']:.1f}×"
            out.append([f"{row['model']} ({n})", run,
                        *(f"{r['ir'][m]:,}" for m in ("none", "torch", "callsite")),
                        f"{r['torch_added_ir'] / n:,.0f}", f"{r['callsite_added_ir'] / n:,.0f}",
                        added, f"{r['callsite_vs_none']:.3f}", f"{r['torch_vs_none']:.2f}"])
    return (["model (nodes)", "trace", "no stack traces", "torch's", "callsite's",
             "torch adds per node", "callsite adds per node", "torch's added / callsite's",
             "callsite / none", "torch / none"], out)


def mlir_contexts_table(result: dict) -> Table:
    """bench_mlir.py --contexts: what each mode adds per build, in instructions and CPU time."""
    measured = result["bindings"]["iree.compiler.ir"]
    wall = measured["contexts_s_per_build"]["sizes"]
    rows = []
    for ops, counts in measured["contexts_ir_per_build"]["sizes"].items():
        timed = wall.get(ops, {})
        times, samples = timed.get("median", {}), timed.get("samples_s", {})
        for kind, label in (("one", "one"), ("new", "new per build")):
            a, b, c = (counts[f"{m}/{kind}"] for m in "abc")
            ta, tb, tc = (times.get(f"{m}/{kind}") for m in "abc")
            clock = ratio((tb - ta) / (tc - ta)) if ta and tc and tc > ta else "—"
            if clock != "—" and all(f"{m}/{kind}" in samples for m in "ac"):
                spread = max(noise(samples[f"{m}/{kind}"]) for m in "ac")
                clock = in_the_noise(clock, (tc - ta) / ta, spread)
            p = counts.get(f"p/{kind}")
            rows.append([f"{ops} ops", label, f"{a:,.0f}", f"{b - a:,.0f}", f"{c - a:,.0f}",
                         ratio((b - a) / (c - a)) if c > a else "—", f"{c / a:.3f}", clock,
                         "—" if p is None else f"{p - a:,.0f}",
                         ratio((b - a) / (p - a)) if p is not None and p > a else "—"])
    return (["kernel", "Context", "(a) no locations", "(b) MLIR's walk adds", "(c) callsite adds",
             "(b−a)/(c−a) Ir", "(c)/(a) Ir", "(b−a)/(c−a) CPU time",
             "(p) callsite through the Python API adds", "(b−a)/(p−a) Ir"], rows)


def memory_table(part: dict, unit: str) -> Table:
    """bench_cold_memory.py: the resident set per mode over the tracers or the Contexts."""
    rows = []
    for row in part["modes"]:
        g = row["growth"]
        alive = row.get("live_contexts_at_end", row.get("callsite_cached_texts"))
        rows.append([row["mode"], *(f"{g[f'rss_{at}_kib'] / 1024:.1f}" for at in ("first", "last")),
                     f"{g['growth_kib_per_unit']:.2f}", "—" if alive is None else str(alive)])
    return (["mode", f"RSS after 1 {unit} (MiB)", "after the last (MiB)",
             f"growth per {unit} (KiB)", "alive at the end"], rows)


def interp_table(result: dict) -> Table:
    """bench_interp.py: per guest call, each form's instructions, those inside callsite's
    extension module, and CPU and wall time; the differences against the form's plain one."""
    forms = result["forms"]

    def over(form: str, key: str) -> str:
        base = forms[forms[form]["base"]].get(key)
        value = forms[form].get(key)
        if form == forms[form]["base"] or value is None or base is None:
            return "—"
        return f"{value - base:+,.0f} ({(value - base) / base:+.1%})"

    rows = [[form, f"{m['instructions']:,.0f}" if "instructions" in m
             else f"n/a ({m['no_instructions']})", over(form, "instructions"),
             f"{m['callsite_instructions']:,.0f}" if "instructions" in m else "—",
             f"{m['cpu_ns']:,.0f}", over(form, "cpu_ns"), f"{m['ns']:,.0f}", over(form, "ns")]
            for form, m in forms.items()]
    return (["form", "instructions", "over plain", "in callsite's module", "CPU ns",
             "over plain (CPU)", "wall ns", "over plain (wall)"], rows)


#: name -> (its result file, or a subfolder of them, under the results folder, how many label
#: columns lead its rows (left-aligned; the figures after them right-aligned), its function of
#: the file's contents or of the subfolder's files by bench)
COLD_TABLES: dict[str, tuple[str, int, Callable[[dict], Table]]] = {
    "torch-first": ("cold/torch-first-py3.11.json", 3, torch_first_table),
    "torch-paths": ("cold/torch-paths-py3.11.json", 4,
                    lambda r: torch_first_table(r, ("make_fx", "export"))),
    "torch-compile": ("cold/torch-paths-py3.11.json", 3, torch_compile_table),
    "torch-instructions": ("cold/torch-first-callgrind-py3.11.json", 2,
                           lambda r: torch_instructions_table(r["rows"])),
    "mlir-contexts": ("cold/mlir-contexts-py3.11.json", 2, mlir_contexts_table),
    "memory-torch": ("cold/memory-py3.11.json", 1, lambda r: memory_table(r["torch"], "tracer")),
    "memory-mlir": ("cold/memory-py3.11.json", 1, lambda r: memory_table(r["mlir"], "Context")),
    "dsls-instructions": ("instructions", 1, dsls_table),
    "interp": ("interp-py3.12.json", 1, interp_table),
}


def table(name: str, results: dict[str, list[dict]]) -> Table:
    runs_of("table", TABLES, name, results)
    return TABLES[name][1](results)
