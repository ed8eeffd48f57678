"""A pycde design built with MLIR's own traceback switch on. Run it as it is, then with the
switch served by callsite -- no line of it changes:

    python examples/pycde/counter.py                   # circt's loc_tracebacks() walks the stack
    CALLSITE_MLIR=1 python examples/pycde/counter.py   # the same locations, built by callsite

Every op points at the line of this file that built it.
"""
import os
import sys
import tempfile
import time

import pycde
from pycde import Clock, Input, Module, Output, Reset, System, generator
from pycde.circt import ir
from pycde.circt.dialects._ods_common import _cext
from pycde.types import UInt


class Counter(Module):
    clk = Clock()
    rst = Reset()
    step = Input(UInt(8))
    count = Output(UInt(8))

    @generator
    def build(ports):
        total = (ports.step + ports.step).as_bits()[0:8].as_uint()
        ports.count = total.reg(ports.clk, ports.rst)


class Top(Module):
    clk = Clock()
    rst = Reset()
    x = Input(UInt(8))
    y = Output(UInt(8))

    @generator
    def build(ports):
        first = Counter(clk=ports.clk, rst=ports.rst, step=ports.x)
        ports.y = Counter(clk=ports.clk, rst=ports.rst, step=first.count).count


def main() -> None:
    # The user's lines, not pycde's: MLIR's own file rule.
    _cext.globals.register_traceback_file_exclusion(os.path.dirname(pycde.__file__))
    with tempfile.TemporaryDirectory() as out, ir.loc_tracebacks(
            max_depth=2, on_explicit_actn=ir.OnExplicitAction.USE_TRACEBACK):
        start = time.process_time()
        system = System([Top], name="Top", output_directory=out)
        system.generate()
        took = time.process_time() - start
        here = os.path.dirname(os.path.abspath(__file__)) + os.sep
        for module in system.mod.body.operations:
            for op in [module] + [o for r in module.regions for b in r.blocks for o in b.operations]:
                print(f"{op.operation.name:16} {str(op.location).replace(here, '')}")
    by = "callsite (CALLSITE_MLIR=1)" if "callsite.mlir" in sys.modules else "MLIR's own walk"
    print(f"\nbuilt in {took * 1e3:.1f} ms of CPU; locations by {by}")


if __name__ == "__main__":
    main()
