"""A small pycde design (modules, ports, registers, instances, parameterised modules) for
compare_locations.py. pycde's own get_user_loc() passes loc= on some ops, so both runs replace
explicit locations by the traceback (on_explicit USE_TRACEBACK) and exclude pycde's files."""
from __future__ import annotations

import os

import pycde
from pycde import Clock, Input, Module, Output, Reset, System, generator, modparams
from pycde.circt import ir
from pycde.circt.dialects._ods_common import _cext
from pycde.types import UInt

from op_walk import op_locations

IR = ir
LIMIT = 10
USER_FILES = (os.path.abspath(__file__),)
ON_EXPLICIT = "use_traceback"
SCALE = 1  # adder stages and counters per build (the benchmark builds bigger designs)


@modparams
def Adder(width: int):

    class Adder(Module):
        a = Input(UInt(width))
        b = Input(UInt(width))
        y = Output(UInt(width + 1))

        @generator
        def build(ports):
            ports.y = ports.a + ports.b

    return Adder


class Counter(Module):
    clk = Clock()
    rst = Reset()
    step = Input(UInt(8))
    count = Output(UInt(8))

    @generator
    def build(ports):
        total = Adder(8)(a=ports.step, b=ports.step)
        state = total.y.as_bits()[0:8].as_uint().reg(ports.clk, ports.rst)
        ports.count = state


class Top(Module):
    clk = Clock()
    rst = Reset()
    x = Input(UInt(8))
    y = Output(UInt(8))
    z = Output(UInt(17))

    @generator
    def build(ports):
        first = Counter(clk=ports.clk, rst=ports.rst, step=ports.x)
        second = Counter(clk=ports.clk, rst=ports.rst, step=first.count)
        for _ in range(SCALE - 1):
            second = Counter(clk=ports.clk, rst=ports.rst, step=second.count)
        wide = Adder(16)(a=UInt(16)(3), b=UInt(16)(4))
        acc = second.count
        for _ in range(SCALE):
            acc = (acc + ports.x).as_bits()[0:8].as_uint()
        ports.y = acc
        ports.z = wide.y


def register_rules() -> None:
    _cext.globals.register_traceback_file_exclusion(os.path.dirname(pycde.__file__))


def build(collect: bool = True) -> list[tuple[str, str]]:
    system = System([Top], name="Top", output_directory="/tmp/callsite-pycde-out")
    system.generate()
    ops: list[tuple[str, str]] = []
    if collect:
        for op in system.mod.body.operations:
            op_locations(op, ops)
    return ops


_own_loc_functions: dict = {}


def own_locations(on: bool) -> None:
    """pycde's own locations (support.get_user_loc: traceback.extract_stack() per call) on, or
    replaced by loc(unknown) everywhere pycde imported it."""
    import sys

    for name, module in list(sys.modules.items()):
        if name.startswith("pycde") and "get_user_loc" in vars(module):
            original = _own_loc_functions.setdefault(name, vars(module)["get_user_loc"])
            module.get_user_loc = original if on else ir.Location.unknown


