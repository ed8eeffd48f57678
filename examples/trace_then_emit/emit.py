"""emit — the emit half: one traced Graph to an MLIR `func.func` of `arith` ops.

Every op gets the location of the user's line that made its node:
``callsite.mlir.location(node.traceback, filter=...)`` renders the traceback captured at trace
time as the location MLIR's ``loc_tracebacks()`` would have built then, and returns the cached
``ir.Location`` when the same traceback (the same line reached the same way) comes again.
"""
from __future__ import annotations

import importlib
from typing import Any

import callsite.mlir

from .tracer import FRAMEWORK_FILTER, Graph

_BINARY = {"add": "AddIOp", "sub": "SubIOp", "mul": "MulIOp"}


def new_context(package: str = "iree.compiler") -> Any:
    """An ir.Context of `package`'s bindings with the arith and func dialects available
    (jaxlib's bindings load their dialects from a registry of their own)."""
    ir = importlib.import_module(f"{package}.ir")
    context = ir.Context()
    if package == "jaxlib.mlir":
        try:
            from jaxlib.mlir._mlir_libs import _jax_mlir_ext as dialects
        except ImportError:  # jaxlib before 0.7 (the newest for Python 3.10)
            from jaxlib.mlir._mlir_libs import register_jax_dialects as dialects

        registry = ir.DialectRegistry()
        dialects.register_dialects(registry)
        context.append_dialect_registry(registry)
        context.load_all_available_dialects()
    return context


def emit(graph: Graph, package: str = "iree.compiler", name: str = "kernel") -> Any:
    """The module holding `graph` as func `name`, built with the bindings of `package`
    (iree.compiler, jaxlib.mlir, mlir...). Call inside `with new_context(package),
    ir.Location.unknown():`
    (the default of the ops that come from no node: the module, the function, its return)."""
    ir = importlib.import_module(f"{package}.ir")
    arith = importlib.import_module(f"{package}.dialects.arith")
    func = importlib.import_module(f"{package}.dialects.func")
    i32 = ir.IntegerType.get_signless(32)
    n_args = sum(1 for node in graph.nodes if node.op == "arg")
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        f = func.FuncOp(name, ([i32] * n_args, [i32] * len(graph.outputs)))
        block = f.add_entry_block()
        with ir.InsertionPoint(block):
            values: list[Any] = []
            for node in graph.nodes:
                if node.op == "arg":
                    values.append(block.arguments[node.value])
                    continue
                loc = callsite.mlir.location(node.traceback, filter=FRAMEWORK_FILTER)
                if node.op == "const":
                    values.append(arith.ConstantOp(i32, node.value, loc=loc).result)
                else:
                    lhs, rhs = (values[i] for i in node.inputs)
                    op = getattr(arith, _BINARY[node.op])
                    values.append(op(lhs, rhs, loc=loc).result)
            func.ReturnOp([values[i] for i in graph.outputs])
    return module
