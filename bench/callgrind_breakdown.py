# bench/callgrind_breakdown.py — callsite's share of a callgrind profile, stage by stage.
"""Reads a callgrind file (``--keep-callgrind`` of ``bench_mlir.py --contexts``, or any run of a
program using callsite) and prints the inclusive instructions of callsite's functions, grouped
into the stages of its cold path: the stack walk, the filter's decisions, symbolization (line
tables), the caches' hashing and tables, MLIR location construction (the bindings' Location
constructors called by callsite, or MLIR's C API and one ir.Location per final location where
the bindings export it), and the teardown of dead contexts' caches.

    python bench/callgrind_breakdown.py FILE [--per N] [--top 25] [--json PATH]

A function's inclusive count is taken as the largest of callgrind_annotate's entries for it
(with debug info, inlined code is listed once per source file; the function's own entry
includes its callees). Stages can overlap where one calls another (frame_location runs inside
kept_location): the table says which are parts of which. ``--per N`` divides by N (builds).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys

LINE = re.compile(r"^\s*([\d,]+)\s+(?:\([^)]*\)\s+)?(\S.*?):(.+?)(?:\s+\[[^\]]*\])?\s*$")

#: stage -> (regex on the demangled function name, what it contains); the first three are
#: entry points, the others parts of them.
STAGES = {
    "callsite's entry (OpView.__init__ wrapper), op built by MLIR included":
        r"^callsite::mlir::\(anonymous namespace\)::injector_call\(",
    "per-Context cache lookup (cache_for), teardown of dead contexts included":
        r"^callsite::mlir::(cache_for|\(anonymous namespace\)::make_cache)\(",
    "  … of which: dropping a dead context's cache (frees its locations and the Context)":
        r"^callsite::mlir::\(anonymous namespace\)::destroy\(callsite::mlir::ContextCache",
    "location of one op (stack_location)":
        r"^callsite::mlir::stack_location\(",
    "  … capture: the stack walk (StackWalk)":
        r"^callsite::StackWalk::StackWalk\(",
    "  … filter decisions (keep_frames; scan_kept on a prefix walk)":
        r"^callsite::detail::(keep_frames|scan_kept)\(",
    "  … of which: first decision per code object (keeps_code_slow)":
        r"^callsite::detail::keeps_code_slow\(",
    "  … the kept frames' location, the builder's tables (kept_location)":
        r"^callsite::mlir::\(anonymous namespace\)::(PythonApiBuilder|CapiBuilder)::kept_location\(",
    "  …   … one frame's location (frame_location): symbolize + MLIR's Location API":
        r"^callsite::mlir::\(anonymous namespace\)::(PythonApiBuilder|CapiBuilder)::frame_location\(",
    "  …   …   … symbolization: line table decode":
        r"^callsite::detail::\(anonymous namespace\)::decode\(",
    "  …   … stack tables: hash, copy and insert (StackTable, StoredStack)":
        r"^(callsite::detail::StackTable<.*>::(find|insert)|callsite::detail::StoredStack::StoredStack|callsite::detail::hash_frames)\(",
    "MLIR's Location constructors through the bindings (Location.file / name / callsite)":
        r"^\+nanobind::detail::func_create<.*(PyFileLineColLocation|PyNameLocation|"
        r"PyCallSiteLocation),",
    "MLIR's Location constructors through its C API (mlirLocation…Get)":
        r"^\+mlirLocation(FileLineColRange|FileLineCol|Name|CallSite|Unknown)Get$",
    "one ir.Location per final location through the C API (Location._CAPICreate)":
        r"^nanobind::detail::func_create<.*PyLocation \(\*&\)\(nanobind::object\)",
}


def annotate(path: str) -> tuple[int, dict[str, int]]:
    """(program total, function -> largest inclusive count)."""
    out = subprocess.run(["callgrind_annotate", "--inclusive=yes", "--threshold=100", path],
                         capture_output=True, text=True, check=True).stdout
    total = 0
    best: dict[str, int] = {}
    for line in out.splitlines():
        if "PROGRAM TOTALS" in line:
            total = int(line.split()[0].replace(",", ""))
            continue
        m = LINE.match(line)
        if not m or m.group(3).startswith(">"):
            continue
        count = int(m.group(1).replace(",", ""))
        function = re.sub(r"'\d+$", "", m.group(3).strip())  # recursion levels: one function
        if function.startswith("=>") or m.group(2).startswith("=>"):
            continue
        best[function] = max(best.get(function, 0), count)
    return total, best


def stages(best: dict[str, int]) -> dict[str, int]:
    """stage -> inclusive count: the largest matching function's, or, for a pattern starting
    with "+", the sum over the matching functions (distinct functions, none calling another)."""
    found = {}
    for stage, pattern in STAGES.items():
        add = pattern.startswith("^\\+")
        rx = re.compile("^" + pattern[3:] if add else pattern)
        values = [v for f, v in best.items() if rx.search(f)]
        found[stage] = sum(values) if add else max(values, default=0)
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file")
    parser.add_argument("--per", type=int, default=1, help="divide by this many builds")
    parser.add_argument("--top", type=int, default=0, help="also list callsite's top functions")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    if args.per < 1:
        parser.error(f"--per must be >= 1, got {args.per}")
    total, best = annotate(args.file)
    found = stages(best)
    print(f"{args.file}: {total / args.per:,.0f} Ir per build collected")
    print("| stage | Ir per build | share of the collected |\n|---|--:|--:|")
    for stage, v in found.items():
        print(f"| {stage} | {v / args.per:,.0f} | {v / total:.1%} |")
    if args.top:
        ours = sorted(((v, f) for f, v in best.items() if f.startswith("callsite")), reverse=True)
        print("\ncallsite's functions, inclusive:")
        for v, f in ours[:args.top]:
            print(f"{v / args.per:12,.0f}  {f[:150]}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"file": args.file, "per": args.per, "total": total, "stages": found}, f,
                      indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
