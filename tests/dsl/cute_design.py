"""A small CuTe DSL (nvidia-cutlass-dsl) program traced in dry-run mode (IR only, no GPU), for
compare_locations.py. CuTe enters MLIR's loc_tracebacks itself when CUTE_DSL_LOC_TRACEBACKS is
set (with NAMELOC_WRAP, keeping its scope names); its own files are excluded by a rule."""
from __future__ import annotations

import os

os.environ.setdefault("CUTE_DSL_DRYRUN", "1")
os.environ.setdefault("CUTE_DSL_LOC_TRACEBACKS", "10")

import cutlass  # noqa: E402
import cutlass.cute as cute  # noqa: E402
from cutlass._mlir import ir  # noqa: E402
from cutlass._mlir.dialects._ods_common import _cext  # noqa: E402
from cutlass.base_dsl.dsl import BaseDSL  # noqa: E402
from op_walk import op_locations  # noqa: E402

IR = ir
LIMIT = 10
USER_FILES = (os.path.abspath(__file__),)
SCALE = 1  # unrolled steps per trace are 4 * SCALE (the benchmark traces bigger kernels)
# Built by CuTe itself with an explicit unknown location (in both runs).
UNLOCATED = {"builtin.module", "func.func", "func.return"}


# CuTe's own location mechanism is MLIR's: CUTE_DSL_LOC_TRACEBACKS=n makes it enter
# ir.loc_tracebacks(max_depth=n, current_loc_actn=NAMELOC_WRAP) around each trace.
OWN_IS_MLIR_SWITCH = True
_own_depth = [int(os.environ["CUTE_DSL_LOC_TRACEBACKS"])]
_enter = BaseDSL._enter_loc_tracebacks


def _enter_with_depth(self):
    self.envar.loc_tracebacks = _own_depth[0]
    return _enter(self)


BaseDSL._enter_loc_tracebacks = _enter_with_depth


def own_locations(on: bool) -> None:
    """CuTe's CUTE_DSL_LOC_TRACEBACKS (LIMIT frames) on, or 0."""
    _own_depth[0] = LIMIT if on else 0


def register_rules() -> None:
    _cext.globals.register_traceback_file_exclusion(os.path.dirname(cutlass.__file__))


@cute.jit
def saxpy(a: cutlass.Float32, x: cutlass.Float32, y: cutlass.Float32):
    scaled = a * x
    total = scaled + y
    for i in cutlass.range(4):
        total = total + cutlass.Float32(i)
    for i in cutlass.range_constexpr(4 * SCALE):
        total = total * a + y
    cute.printf("%f\n", total)


def build(collect: bool = True) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    original = BaseDSL._merge_gpu_link_libraries

    def record(self, module):  # the traced module, before compilation (skipped in dry-run)
        if collect:
            op_locations(module.operation, found)
        return original(self, module)

    BaseDSL._merge_gpu_link_libraries = record
    try:
        saxpy(cutlass.Float32(2.0), cutlass.Float32(3.0), cutlass.Float32(1.0))
    finally:
        BaseDSL._merge_gpu_link_libraries = original
    return found
