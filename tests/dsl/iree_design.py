"""A small kernel built with iree-base-compiler's MLIR bindings (func, arith, scf) for
compare_locations.py."""
from __future__ import annotations

import os

from iree.compiler import ir
from iree.compiler.dialects import arith, func, scf
from op_walk import op_locations

IR = ir
LIMIT = 10
USER_FILES = (os.path.abspath(__file__),)
SCALE = 1  # loops per build (the benchmark builds bigger designs)


def axpy(a, x, y):
    return arith.addi(arith.muli(a, x), y)


def accumulate(n, init):
    index = ir.IndexType.get()
    zero, one = arith.constant(index, 0), arith.constant(index, 1)
    loop = scf.ForOp(zero, n, one, [init])
    with ir.InsertionPoint(loop.body):
        value = axpy(loop.inner_iter_args[0], loop.inner_iter_args[0], loop.inner_iter_args[0])
        scf.YieldOp([value])
    return loop.results[0]


def lower(module):
    i32, index = ir.IntegerType.get_signless(32), ir.IndexType.get()
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("kernel", ir.FunctionType.get([index, i32], [i32]))
        block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            n, x = block.arguments
            total = axpy(x, x, x)
            for _ in range(SCALE):
                total = accumulate(n, total)
            func.ReturnOp([total])


def build(collect: bool = True) -> list[tuple[str, str]]:
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        lower(module)
        return op_locations(module.operation) if collect else []
