# bench/callgrind_breakdown.py — callsite's share of a callgrind profile, stage by stage.
"""Reads a callgrind file (``bench_mlir.py --contexts --keep-callgrind DIR``'s, or any run of a
program using callsite, from a build with symbols such as ``bench/callgrind_capture.sh``'s
``build/bench-cg-3XY``) and prints the inclusive instructions of callsite's functions grouped
into the stages of its cold path (STAGES); ``--stages torch``: the torch recorder's stages in a
file of ``bench_torch.py --paths first --callgrind-only --keep-callgrind DIR``, with
``--baseline`` (the same trace without stack traces) as shares of what callsite adds.

    python bench/callgrind_breakdown.py FILE [--per N]
    python bench/callgrind_breakdown.py --stages torch FILE --baseline NONE_FILE

A function's inclusive count is the largest of callgrind_annotate's entries for it (with debug
info, inlined code is listed once per source file; the function's own entry includes its
callees). Stages overlap where one calls another (the table says which are parts of which).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

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
    "  … of which: first decision per code object (keeps_uncached)":
        r"^callsite::detail::keeps_uncached\([^)]*PyCodeObject",
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


#: The torch recorder's stages (bench_torch.py --paths first, callsite's mode): the first is
#: the native call per node, the others parts of it.
TORCH_STAGES = {
    "the native recording (record), inclusive":
        r"^callsite::torch::\(anonymous namespace\)::texts_record\(",
    "  … reading the stack's source files (source_lines)":
        r"^callsite::detail::source_lines\(",
    "  … symbolization: line table decode":
        r"^callsite::detail::\(anonymous namespace\)::decode\(",
    "  … the capture":
        r"^callsite::capture\(",
}

STAGE_SETS = {"mlir": STAGES, "torch": TORCH_STAGES}


def _annotated(path: str, inclusive: bool) -> list[str]:
    """callgrind_annotate's lines for `path`, every function listed (--threshold=100)."""
    return subprocess.run(["callgrind_annotate", f"--inclusive={'yes' if inclusive else 'no'}",
                           "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout.splitlines()


def annotate(path: str) -> tuple[int, dict[str, int]]:
    """(program total, function -> largest inclusive count)."""
    total = 0
    best: dict[str, int] = {}
    for line in _annotated(path, inclusive=True):
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


def object_self(path: str, name: str) -> int:
    """Instructions executed inside the object files named `name`.* (their functions' own
    counts, callees in other objects left out): what a library's own code costs."""
    inside = re.compile(rf"\[(?:.*/)?{re.escape(name)}\.[^/\]]*\]\s*$")
    return sum(int(m.group(1).replace(",", "")) for line in _annotated(path, inclusive=False)
               if (m := LINE.match(line)) and inside.search(line))


def stages(best: dict[str, int], table: dict[str, str] = STAGES) -> dict[str, int]:
    """stage -> inclusive count: the largest matching function's, or, for a pattern starting
    with "+", the sum over the matching functions (distinct functions, none calling another)."""
    found = {}
    for stage, pattern in table.items():
        add = pattern.startswith("^\\+")
        rx = re.compile("^" + pattern[3:] if add else pattern)
        values = [v for f, v in best.items() if rx.search(f)]
        found[stage] = sum(values) if add else max(values, default=0)
    return found


def torch_rows(found: dict[str, int], added: int | None) -> list[tuple[str, int]]:
    """The torch recorder's stages, the rest of the recording (formatting, joining, the
    tables' lookups and checks) and, given callsite's added count, the Python around it."""
    record = found["the native recording (record), inclusive"]
    parts = sum(v for stage, v in found.items() if stage.startswith("  "))
    rows = list(found.items())
    rows.append(("  … the rest: formatting the new frames, joining the texts, the tables' "
                 "lookups and checks", record - parts))
    if added is not None:
        rows.append(("the Python around it (_record_stack_trace: the tracer's class and "
                     "torch's rules checked)", added - record))
    return rows


def main() -> int:
    parser = _common.parser(__doc__.split("\n\n")[0], json=False)
    parser.add_argument("file")
    parser.add_argument("--stages", choices=sorted(STAGE_SETS), default="mlir",
                        help="whose stages: bench_mlir.py's (default) or bench_torch.py's")
    parser.add_argument("--baseline", metavar="FILE",
                        help="--stages torch: the same trace without stack traces, so that "
                             "shares are of callsite's added instructions")
    parser.add_argument("--per", type=_common.count, default=1, help="divide by this many builds")
    args = parser.parse_args()
    for option, path in (("FILE", args.file), ("--baseline", args.baseline)):
        if path and not os.path.isfile(path):
            parser.error(f"{option}: no such file {path!r}")
    if args.baseline and args.stages != "torch":
        parser.error("--baseline goes with --stages torch")
    total, best = annotate(args.file)
    found = stages(best, STAGE_SETS[args.stages])
    if args.stages == "torch":
        added = total - annotate(args.baseline)[0] if args.baseline else None
        whole, what = (added, "callsite's added") if added else (total, "the collected")
        print(f"{args.file}: {total:,} Ir collected"
              + (f", {added:,} more than {args.baseline}" if added is not None else ""))
        print(f"| stage | inclusive Ir | share of {what} |\n|---|--:|--:|")
        for stage, v in torch_rows(found, added):
            print(f"| {stage} | {v:,} | {v / whole:.0%} |")
        if any(v == 0 for v in found.values()):
            print("(a stage of 0: no function of that name in the file; a build without symbols, "
                  "or the function was inlined)")
    else:
        print(f"{args.file}: {total / args.per:,.0f} Ir per build collected")
        print("| stage | Ir per build | share of the collected |\n|---|--:|--:|")
        for stage, v in found.items():
            print(f"| {stage} | {v / args.per:,.0f} | {v / total:.1%} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
