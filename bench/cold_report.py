# bench/cold_report.py — the MLIR breakdown of docs/benchmarks.md's cold-path section.
"""Prints callsite's stages per build of a new Context and of one Context (the benchmarks page's
"Where callsite's cold time goes") from the callgrind files ``bench_mlir.py --contexts
--keep-callgrind DIR`` kept and that run's result file. The section's other tables are drawn
from the result files by the docs' extension (docs/_ext/benchmark_tables.py).

    python bench/cold_report.py --mlir FILE --callgrind-dir DIR
"""
from __future__ import annotations

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import callgrind_breakdown  # noqa: E402


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mlir", metavar="FILE", required=True,
                        type=argparse.FileType(encoding="utf-8"),
                        help="the result file of bench_mlir.py --contexts")
    parser.add_argument("--callgrind-dir", metavar="DIR", required=True,
                        help="the callgrind files its run kept (--keep-callgrind)")
    args = parser.parse_args()
    print(mlir_breakdown(json.load(args.mlir), args.callgrind_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
