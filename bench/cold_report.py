# bench/cold_report.py — the cold-path tables of docs/benchmarks.md, from the result files.
"""Prints the markdown tables of the benchmarks page's cold-path section from the result files
of ``bench_torch.py --paths first`` and ``bench_mlir.py --contexts`` (and, for the breakdown of
the MLIR case, the callgrind files that ``--keep-callgrind`` kept).

    python bench/cold_report.py --torch FILE --mlir FILE [--callgrind-dir DIR]
    python bench/cold_report.py --readme     # the README's cost rows (bench/readme_costs.py)
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_breakdown  # noqa: E402

MODES = {"a": "(a) no locations", "b": "(b) MLIR's walk", "c": "(c) callsite serving it"}


def ratio(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f}×" if value >= 10 else f"{value:.2f}×"


def spread(samples: list[float]) -> float:
    """The clock's noise in one mode: (median − min) / min over the repeats."""
    ordered = sorted(samples)
    median = (ordered[(len(ordered) - 1) // 2] + ordered[len(ordered) // 2]) / 2
    return (median - ordered[0]) / ordered[0]


def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f}"


def torch_tables(result: dict) -> str:
    meta = result["meta"]
    out = [f"`{os.path.basename(result['_path'])}`, {meta['date'][:16]} UTC, load average "
           f"{meta['machine']['load_average_at_start'][0]:.1f} at start, {result['repeats']} "
           f"repeats (process CPU time, ms per trace):", "",
           "| model (nodes, frames per capture mean/max) | trace | stat | no stack traces | "
           "torch's | callsite's | torch adds per node | callsite adds per node | torch's "
           "added / callsite's | callsite / none | torch / none |",
           "|:--|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for row in result["rows"]:
        if row["path"] != "first":
            continue
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
    imports = [row["torch_imports_s"] for row in result["rows"] if row["path"] == "first"]
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
    meta = result["meta"]
    return "\n".join([f"`{os.path.basename(result['_path'])}`, {meta['date'][:16]} UTC "
                      f"(instructions do not depend on the load; only the measured trace "
                      f"collected):", "", *torch_instruction_lines(result["rows"])])


def mlir_tables(result: dict) -> str:
    meta = result["meta"]
    measured = result["bindings"]["iree.compiler.ir"]
    ir = measured["contexts_ir_per_build"]
    wall = measured["contexts_s_per_build"]
    out = [f"`{os.path.basename(result['_path'])}`, {meta['date'][:16]} UTC, load average "
           f"{meta['machine']['load_average_at_start'][0]:.1f} at start; instructions per build "
           f"(callgrind, {ir['builds']} builds collected after two warm-up builds) and process CPU "
           f"time per build (median of {wall['repeats']}, {wall['builds']} builds per sample):", "",
           "| kernel | Context | (a) no locations | (b) MLIR's walk adds | (c) callsite adds | "
           "(b−a)/(c−a) Ir | (c)/(a) Ir | (b−a)/(c−a) CPU time | (p) callsite through the "
           "Python API adds | (b−a)/(p−a) Ir |",
           "|:--|:--|--:|--:|--:|--:|--:|--:|--:|--:|"]
    for ops, counts in ir["sizes"].items():
        times = wall["sizes"].get(ops, {}).get("median", {})
        for kind, label in (("one", "one"), ("new", "new per build")):
            a, b, c = (counts[f"{m}/{kind}"] for m in "abc")
            ta, tb, tc = (times.get(f"{m}/{kind}") for m in "abc")
            clock = ratio((tb - ta) / (tc - ta)) if ta and tc and tc > ta else "—"
            samples = wall["sizes"].get(ops, {}).get("samples_s", {})
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
    measured = result["bindings"]["iree.compiler.ir"]
    ir = measured["contexts_ir_per_build"]
    builds = ir["builds"]
    out = []
    for ops, counts in ir["sizes"].items():
        header = f"| stage (inclusive Ir per build, {ops} ops) |"
        sep = "|:--|"
        columns = []
        for kind in ("one", "new"):
            path = os.path.join(folder, f"mlir-c-{kind}-{ops}.out")
            if not os.path.exists(path):
                continue
            _, best = callgrind_breakdown.annotate(path)
            columns.append((kind, callgrind_breakdown.stages(best),
                            counts[f"c/{kind}"] - counts[f"a/{kind}"]))
            header += f" {kind} Context | share of callsite's added |"
            sep += "--:|--:|"
        if not columns:
            continue
        out += [header, sep]
        for stage in callgrind_breakdown.STAGES:
            cells = []
            for _, found, added in columns:
                v = found[stage] / builds
                cells.append(f"{v:,.0f} | {v / added:.0%}")
            out.append(f"| {stage} | " + " | ".join(cells) + " |")
        out.append("| callsite's added instructions ((c) − (a)) | " + " | ".join(
            f"{added:,.0f} | 100%" for _, _, added in columns) + " |")
        out.append("")
    return "\n".join(out)


def memory_tables(result: dict) -> str:
    """bench_cold_memory.py's tables: the resident set per mode over the tracers and Contexts."""
    import bench_cold_memory

    meta = result["meta"]
    out = [f"`{os.path.basename(result['_path'])}`, {meta['date'][:16]} UTC:"]
    if "torch" in result:
        out += ["", f"torch, {result['torch']['tracers']:,} tracers (a model in a file of its own "
                f"each; alive at the end: callsite's cached stack texts):", "",
                bench_cold_memory.table("torch", result["torch"]["modes"], "tracer")]
    if "mlir" in result:
        out += ["", f"MLIR, {result['mlir']['contexts']:,} kernels of 64 ops in a new Context each "
                f"(alive at the end: live Contexts):", "",
                bench_cold_memory.table("mlir", result["mlir"]["modes"], "Context")]
    return "\n".join(out)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", metavar="FILE")
    parser.add_argument("--torch-callgrind", metavar="FILE",
                        help="bench_torch.py --paths first --callgrind-only's result file")
    parser.add_argument("--mlir", metavar="FILE")
    parser.add_argument("--callgrind-dir", metavar="DIR")
    parser.add_argument("--memory", metavar="FILE", help="bench_cold_memory.py's result file")
    parser.add_argument("--readme", action="store_true",
                        help="print the README's cost rows from the committed result files "
                             "(bench/readme_costs.py)")
    args = parser.parse_args()
    if args.readme:
        import readme_costs
        print("\n".join(readme_costs.readme_rows()))
        return 0
    for option, path in (("--torch", args.torch), ("--torch-callgrind", args.torch_callgrind),
                         ("--mlir", args.mlir), ("--memory", args.memory)):
        if path and not os.path.exists(path):
            parser.error(f"{option}: no such file {path!r}")
    if args.torch:
        result = json.load(open(args.torch))
        result["_path"] = args.torch
        print(torch_tables(result), end="\n\n")
    if args.torch_callgrind:
        result = json.load(open(args.torch_callgrind))
        result["_path"] = args.torch_callgrind
        print(torch_instructions_table(result), end="\n\n")
    if args.mlir:
        result = json.load(open(args.mlir))
        result["_path"] = args.mlir
        print(mlir_tables(result), end="\n\n")
        if args.callgrind_dir:
            print(mlir_breakdown(result, args.callgrind_dir))
    if args.memory:
        result = json.load(open(args.memory))
        result["_path"] = args.memory
        print(memory_tables(result), end="\n\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
