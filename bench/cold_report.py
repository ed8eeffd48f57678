# bench/cold_report.py — the cold-path tables of docs/benchmarks.md, from the result files.
"""Prints the markdown tables of the benchmarks page's cold-path section from the result files
of ``bench_torch.py --paths first [--callgrind-only]``, ``bench_mlir.py --contexts`` (with the
callgrind files ``--keep-callgrind`` kept, its breakdown) and ``bench_cold_memory.py``.

    python bench/cold_report.py [--torch FILE] [--torch-callgrind FILE] [--mlir FILE]
                                [--callgrind-dir DIR] [--memory FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_breakdown  # noqa: E402
from readme_costs import spread  # noqa: E402  (the clock's noise, as the README's rows read it)


def ratio(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}×" if value >= 10 else f"{value:.2f}×"


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def heading(result: dict, load: bool = True) -> str:
    """The result file's name and date, and the load average its run started at."""
    meta = result["meta"]
    out = f"`{os.path.basename(result['_path'])}`, {meta['date'][:16]} UTC"
    return out + (f", load average {meta['machine']['load_average_at_start'][0]:.1f} at start"
                  if load else "")


def torch_tables(result: dict) -> str:
    out = [f"{heading(result)}, {result['repeats']} repeats (process CPU time, ms per trace):", "",
           "| model (nodes, frames per capture mean/max) | trace | stat | no stack traces | "
           "torch's | callsite's | torch adds per node | callsite adds per node | torch's "
           "added / callsite's | callsite / none | torch / none |",
           "|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|"]
    rows = [row for row in result["rows"] if row["path"] == "first"]
    for row in rows:
        label = (f"{row['model']} ({row['nodes']}, {row['frames']['mean']:.0f}/"
                 f"{row['frames']['max']})")
        for run in ("first", "again"):
            # callsite's part against the spread of its own repeats: a ratio of a difference
            # smaller than the spread is marked, not read as a measurement.
            noise = row[run]["noise"]["callsite"]
            for stat in ("median", "min"):
                r = row[run][stat]
                added = ratio(r["added_ratio"])
                if r["added_ratio"] is not None and r["callsite_added_s"] / r["none_s"] < noise:
                    added += f", in the noise ({noise:.0%})"
                out.append(f"| {label} | {run} | {stat} | {ms(r['none_s'])} | {ms(r['torch_s'])} | "
                           f"{ms(r['callsite_s'])} | {r['torch_added_us_per_node']:.1f} µs | "
                           f"{r['callsite_added_us_per_node']:.1f} µs | {added} | "
                           f"{ratio(r['callsite_vs_none'])} | {ratio(r['torch_vs_none'])} |")
    imports = [row["torch_imports_s"] for row in rows]
    out += ["", f"torch's one-time imports of its filter (`uninteresting_files()`, before the first "
            f"trace in every mode, not in the table): {ms(min(imports))}–{ms(max(imports))} ms."]
    return "\n".join(out)


def torch_instruction_lines(rows: list[dict]) -> list[str]:
    """The callgrind counts of `bench_torch.py --paths first --callgrind[-only]` rows as a
    markdown table: each trace in a process of its own, only the trace collected."""
    out = ["| model (nodes) | trace | no stack traces | torch's | callsite's | torch adds per node "
           "| callsite adds per node | torch's added / callsite's | callsite / none | torch / none |",
           "|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for row in rows:
        ins = row.get("instructions")
        if row["path"] != "first" or not ins or "skipped" in ins:
            continue
        n = ins["nodes"]
        for run in ("first", "again"):
            r = ins[run]
            out.append(f"| {row['model']} ({n}) | {run} | {r['ir']['none']:,} | "
                       f"{r['ir']['torch']:,} | {r['ir']['callsite']:,} | "
                       f"{r['torch_added_ir'] / n:,.0f} | {r['callsite_added_ir'] / n:,.0f} | "
                       f"{ratio(r['added_ratio'])} | {r['callsite_vs_none']:.3f} | "
                       f"{r['torch_vs_none']:.2f} |")
    return out


def torch_instructions_table(result: dict) -> str:
    return "\n".join([f"{heading(result, load=False)} (instructions do not depend on the load; "
                      f"only the measured trace collected):", "",
                      *torch_instruction_lines(result["rows"])])


def mlir_tables(result: dict) -> str:
    measured = result["bindings"]["iree.compiler.ir"]
    ir = measured["contexts_ir_per_build"]
    wall = measured["contexts_s_per_build"]
    out = [f"{heading(result)}; instructions per build (callgrind, {ir['builds']} builds collected "
           f"after two warm-up builds) and process CPU time per build (median of "
           f"{wall['repeats']}, {wall['builds']} builds per sample):", "",
           "| kernel | Context | (a) no locations | (b) MLIR's walk adds | (c) callsite adds | "
           "(b−a)/(c−a) Ir | (c)/(a) Ir | (b−a)/(c−a) CPU time | (p) callsite through the "
           "Python API adds | (b−a)/(p−a) Ir |",
           "|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for ops, counts in ir["sizes"].items():
        timed = wall["sizes"].get(ops, {})
        times, samples = timed.get("median", {}), timed.get("samples_s", {})
        for kind, label in (("one", "one"), ("new", "new per build")):
            a, b, c = (counts[f"{m}/{kind}"] for m in "abc")
            ta, tb, tc = (times.get(f"{m}/{kind}") for m in "abc")
            clock = ratio((tb - ta) / (tc - ta)) if ta and tc and tc > ta else "—"
            if clock != "—" and all(f"{m}/{kind}" in samples for m in "ac"):
                noise = max(spread(samples[f"{m}/{kind}"]) for m in "ac")
                if (tc - ta) / ta < noise:  # callsite's part smaller than the repeats' spread
                    clock += f", in the noise ({noise:.0%})"
            p = counts.get(f"p/{kind}")
            python_api = "— | —" if p is None else \
                f"{p - a:,.0f} | {ratio((b - a) / (p - a)) if p > a else '—'}"
            out.append(f"| {ops} ops | {label} | {a:,.0f} | {b - a:,.0f} | {c - a:,.0f} | "
                       f"{ratio((b - a) / (c - a)) if c > a else '—'} | {c / a:.3f} | {clock} | "
                       f"{python_api} |")
    return "\n".join(out)


def mlir_breakdown(result: dict, folder: str) -> str:
    """callsite's stages per build in the kept callgrind files of mode (c), per kernel size."""
    ir = result["bindings"]["iree.compiler.ir"]["contexts_ir_per_build"]
    out = []
    for ops, counts in ir["sizes"].items():
        columns = []  # (stages found, callsite's added Ir per build) per Context kind
        header, sep = f"| stage (inclusive Ir per build, {ops} ops) |", "|:--|"
        for kind in ("one", "new"):
            path = os.path.join(folder, f"mlir-c-{kind}-{ops}.out")
            if os.path.exists(path):
                found = callgrind_breakdown.stages(callgrind_breakdown.annotate(path)[1])
                columns.append((found, counts[f"c/{kind}"] - counts[f"a/{kind}"]))
                header += f" {kind} Context | share of callsite's added |"
                sep += "--:|--:|"
        if not columns:
            continue
        out += [header, sep]
        for stage in callgrind_breakdown.STAGES:
            per_build = [(found[stage] / ir["builds"], added) for found, added in columns]
            cells = [f"{v:,.0f} | {v / added:.0%}" for v, added in per_build]
            out.append(f"| {stage} | " + " | ".join(cells) + " |")
        out += ["| callsite's added instructions ((c) − (a)) | " + " | ".join(
            f"{added:,.0f} | 100%" for _, added in columns) + " |", ""]
    return "\n".join(out)


def memory_tables(result: dict) -> str:
    """bench_cold_memory.py's tables: the resident set per mode over the tracers and Contexts."""
    import bench_cold_memory

    out = [f"{heading(result, load=False)}:"]
    if "torch" in result:
        out += ["", f"torch, {result['torch']['tracers']:,} tracers (a model in a file of its own "
                f"each; alive at the end: callsite's cached stack texts):", "",
                bench_cold_memory.table("torch", result["torch"]["modes"], "tracer")]
    if "mlir" in result:
        out += ["", f"MLIR, {result['mlir']['contexts']:,} kernels of 64 ops in a new Context each "
                f"(alive at the end: live Contexts):", "",
                bench_cold_memory.table("mlir", result["mlir"]["modes"], "Context")]
    return "\n".join(out)


def result_file(path: str) -> dict:
    """argparse type of a result file: its contents, its path under "_path"."""
    if not os.path.exists(path):
        raise argparse.ArgumentTypeError(f"no such file {path!r}")
    with open(path, encoding="utf-8") as f:
        return {**json.load(f), "_path": path}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    tables = {"torch": torch_tables, "torch_callgrind": torch_instructions_table,
              "mlir": mlir_tables, "memory": memory_tables}
    for name in tables:
        parser.add_argument(f"--{name.replace('_', '-')}", metavar="FILE", type=result_file)
    parser.add_argument("--callgrind-dir", metavar="DIR", help="--mlir's kept callgrind files")
    args = parser.parse_args()
    for name, table in tables.items():
        result = getattr(args, name)
        if result:
            print(table(result), end="\n\n")
        if result and name == "mlir" and args.callgrind_dir:
            print(mlir_breakdown(result, args.callgrind_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
