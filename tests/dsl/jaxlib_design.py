"""A small program built with jaxlib's MLIR bindings (func, arith, stablehlo, as jax lowers a
function) for compare_locations.py."""
from __future__ import annotations

import os

from jaxlib.mlir import ir
try:
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext as jax_dialects
except ImportError:  # jaxlib before 0.7 (the newest for Python 3.10)
    from jaxlib.mlir._mlir_libs import register_jax_dialects as jax_dialects
from jaxlib.mlir.dialects import arith, func, stablehlo
from op_walk import op_locations

IR = ir
LIMIT = 10
USER_FILES = (os.path.abspath(__file__),)
SCALE = 1  # layers per build are 3 * SCALE (the benchmark builds bigger designs)


def make_context():
    registry = ir.DialectRegistry()
    jax_dialects.register_dialects(registry)
    context = ir.Context()
    context.append_dialect_registry(registry)
    context.load_all_available_dialects()
    stablehlo.register_dialect(context)
    return context


def scale(x, factor):
    c = stablehlo.constant(ir.DenseElementsAttr.get_splat(x.type, ir.FloatAttr.get_f32(factor)))
    return stablehlo.multiply(x, c)


def layer(x, bias):
    y = scale(x, 2.0)
    y = stablehlo.add(y, bias)
    return stablehlo.tanh(y)


def lower(module):
    f32x4 = ir.RankedTensorType.get([4], ir.F32Type.get())
    with ir.InsertionPoint(module.body):
        fn = func.FuncOp("main", ir.FunctionType.get([f32x4, f32x4], [f32x4]))
        block = fn.add_entry_block()
        with ir.InsertionPoint(block):
            x, b = block.arguments
            for _ in range(3 * SCALE):
                x = layer(x, b)
            i = arith.constant(ir.IndexType.get(), 7)
            del i
            func.ReturnOp([x])


def build(collect: bool = True) -> list[tuple[str, str]]:
    with make_context(), ir.Location.unknown():
        module = ir.Module.create()
        lower(module)
        return op_locations(module.operation) if collect else []
