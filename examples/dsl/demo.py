"""demo — builds the kernels with callsite.mlir.auto_locations, prints the module with its debug
info, runs a pass pipeline that keeps locations, and maps every op back to the user's line."""
from __future__ import annotations

import linecache
import os
import re
import sys

import callsite
import callsite.mlir

from . import helpers, kernels, tinydsl
from .tinydsl import ir

try:
    from iree.compiler.passmanager import PassManager
except ImportError:  # pragma: no cover
    from mlir.passmanager import PassManager

PIPELINE = "builtin.module(inline, canonicalize, cse, symbol-dce)"
_FILE_LOC = re.compile(r'"((?:[^"\\]|\\.)*)":(\d+):(\d+)')


def user_filter() -> callsite.Filter:
    """The user's frames only: a regex rule drops every file outside this example's directory
    (the interpreter, the driver's callers, the bindings' dialect classes), literal rules drop
    the DSL framework, the helper library and this driver."""
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "")
    # No default exclusions: they drop callsite's package directory, which holds this example
    # when it runs from an installed wheel; the first rule drops everything else anyway.
    f = callsite.Filter(exclude=[f"^(?!{re.escape(here)})"], default_exclusions=False)
    for module in (tinydsl, helpers, sys.modules[__name__]):
        f.exclude_file(module.__file__)
    return f


def build(filter: callsite.Filter | None) -> ir.Module:
    if filter is None:
        return tinydsl.build_module(kernels.KERNELS)
    with callsite.mlir.auto_locations(filter):
        return tinydsl.build_module(kernels.KERNELS)


def source_map(module: ir.Module, out) -> None:
    """Every op, with the innermost user line its location names (and the call sites it was
    inlined through or called from), read back from the location text alone."""
    rows = []

    def visit(op):
        places = _FILE_LOC.findall(str(op.location))
        if places and op.operation.name != "builtin.module":
            path, line, col = places[0]
            via = " <- ".join(f"{os.path.basename(p)}:{ln}" for p, ln, _ in places[1:])
            text = linecache.getline(path, int(line)).strip()
            rows.append((op.operation.name, f"{os.path.basename(path)}:{line}:{col}", text, via))
        return ir.WalkResult.ADVANCE

    module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    width = max(len(r[0]) for r in rows)
    for name, where, text, via in rows:
        print(f"  {name:<{width}}  {where:<16} {text}" + (f"    [via {via}]" if via else ""),
              file=out)


def main(out=sys.stdout) -> int:
    filter = user_filter()
    say = lambda *a: print(*a, file=out)  # noqa: E731
    with ir.Context(), ir.Location.unknown():
        module = build(filter)
        say(f"== kernels from {kernels.__file__}, built with callsite.mlir.auto_locations")
        say("   (rules: keep the example's files only, minus the DSL framework and the helper")
        say("   library; ops the framework builds itself get the kernel's definition: loc=)\n")
        say(module.operation.get_asm(enable_debug_info=True))
        module.operation.verify()
        say(f"== after the pass pipeline {PIPELINE}: locations kept; an inlined op's")
        say("   location becomes callsite(its location at the call's location)\n")
        PassManager.parse(PIPELINE).run(module.operation)
        say(module.operation.get_asm(enable_debug_info=True))
        say("== every op of the optimised module, back to the user's source line:\n")
        source_map(module, out)
        # A single timing on a busy machine is noise: the bench command measures same-run ratios.
        say("\n== what the locations cost per op: python -m callsite bench (same-run ratios "
            "against\n   MLIR's own walk, here), and the benchmarks page of the docs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
