"""The switch section of ``python -m callsite demo``: MLIR's own traceback switch, as a DSL turns
it on, run twice on the same program -- as it is, and with ``CALLSITE_MLIR=1`` -- with nothing
else changed. The program builds the DSL example's kernels (examples/dsl) inside
``ir.loc_tracebacks()``, with MLIR's own file rules dropping the bindings' Python files and the
DSL framework, and prints every op's location.

Where MLIR's walk records frames, both runs print the same text. On a stable-ABI (abi3) build of
the bindings (iree's wheels on Python 3.12+) MLIR's walk records none: every op it locates says
``loc(unknown)``, while callsite, serving the same switch, gives the user's lines.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, TextIO

#: The program, run in a fresh interpreter per mode. Its first argument is the examples
#: directory; it prints one JSON line: the extension's file name and [op name, location] pairs.
PROGRAM = r'''
import json, os, sys
if os.environ.get("CALLSITE_MLIR", "0") not in ("", "0") and "callsite.mlir._detect" not in sys.modules:
    # A development build on PYTHONPATH has no site-packages .pth to run the start-up hook:
    # do what it does.
    import callsite.mlir
    callsite.mlir.accelerate()
os.environ["CALLSITE_EXAMPLES"] = sys.argv[1]
from callsite._cli.demo import load_example
load_example("dsl")
from callsite_examples_dsl import helpers, kernels, tinydsl
from callsite_examples_dsl.tinydsl import ir, arith
from iree.compiler._mlir_libs import _mlir

# What a DSL does: MLIR's own rules drop the bindings' Python files, the framework's and the
# driver's (this program: "<string>").
rules = _mlir.globals
for path in (os.path.dirname(arith.__file__), tinydsl.__file__, helpers.__file__, "<string>"):
    rules.register_traceback_file_exclusion(path)
with ir.Context(), ir.Location.unknown(), ir.loc_tracebacks(max_depth=2):
    module = tinydsl.build_module(kernels.KERNELS)
ops = []
def visit(op):
    if op.operation.name != "builtin.module":
        ops.append([op.operation.name, str(op.location)])
    return ir.WalkResult.ADVANCE
module.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
print(json.dumps({"extension": os.path.basename(_mlir.__file__), "ops": ops}))
'''

MODES = (("0", "MLIR's own walk"), ("1", "CALLSITE_MLIR=1"))


def run_program(examples: Path, value: str) -> dict[str, Any]:
    """The program's report with CALLSITE_MLIR=value (a subprocess; RuntimeError on failure)."""
    env = {**os.environ, "CALLSITE_MLIR": value}
    done = subprocess.run([sys.executable, "-c", PROGRAM, str(examples)], capture_output=True,
                          text=True, env=env, timeout=300)
    if done.returncode:
        raise RuntimeError(f"the program failed with CALLSITE_MLIR={value}:\n{done.stderr[-2000:]}")
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def main(out: TextIO, examples: Path) -> int:
    """Runs the program both ways and prints the two locations of every op; 1 if a run failed
    or the two runs built different ops."""
    reports: dict[str, dict[str, Any]] = {}
    for value, _ in MODES:
        try:
            reports[value] = run_program(examples, value)
        except RuntimeError as e:
            print(e, file=out)
            return 1
    theirs, ours = reports["0"]["ops"], reports["1"]["ops"]
    if [name for name, _ in theirs] != [name for name, _ in ours]:
        print("the two runs built different ops:", theirs, ours, file=out)
        return 1
    prefix = os.path.join(str(examples), "dsl", "")

    def short(loc: str) -> str:
        return loc.replace(prefix, "")

    extension = reports["0"]["extension"]
    abi3 = ".abi3." in extension
    print(f"Python {sys.version_info[0]}.{sys.version_info[1]}; MLIR's extension: {extension}"
          + (" (stable ABI)" if abi3 else "") + ".\n"
          "One program, run twice: the DSL example's kernels built inside MLIR's own\n"
          "ir.loc_tracebacks(max_depth=2), its file rules dropping the bindings', the DSL's and\n"
          "the driver's files; then the same with CALLSITE_MLIR=1. kernels.py is\n"
          f"  {prefix}kernels.py\n", file=out)
    name_width = max(len(name) for name, _ in theirs)
    left = max(len(short(loc)) for _, loc in theirs)
    print(f"  {'op':<{name_width}}  {MODES[0][1]:<{left}}  {MODES[1][1]}", file=out)
    for (name, loc), (_, mine) in zip(theirs, ours):
        print(f"  {name:<{name_width}}  {short(loc):<{left}}  "
              + ("(the same)" if mine == loc else short(mine)), file=out)
    print(file=out)
    if theirs == ours:
        print(f"The same text for all {len(ours)} ops, byte for byte: MLIR's walk records frames "
              "on this build.\nOn Python 3.12+ iree's wheels are stable-ABI: there MLIR's own "
              "walk records none\n(loc(unknown)) and callsite still gives these lines "
              "(CALLSITE_DEMO_PYTHON=3.12 scripts/demo.sh).", file=out)
    else:
        unknown = sum(loc == "loc(unknown)" for _, loc in theirs)
        located = sum(prefix in loc for _, loc in ours)
        print(f"MLIR's own walk: loc(unknown) for {unknown} of {len(theirs)} ops"
              + (" (it records no frame on a stable-ABI build)" if abi3 else "")
              + f";\ncallsite, serving the same switch: {located} of {len(ours)} at the user's "
              "lines of kernels.py.", file=out)
    return 0
