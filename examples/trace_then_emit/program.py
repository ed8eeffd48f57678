"""A user's program in the trace-then-emit DSL: trace, then emit MLIR with locations.

    python -m examples.trace_then_emit.program [iree.compiler|jaxlib.mlir|mlir]

Every `# op` line builds one node at trace time; after emission, each arith op's location
names that line (and the helper's caller), as MLIR's loc_tracebacks() would have at trace time.
"""
from __future__ import annotations

import importlib
import sys

from .emit import emit, new_context
from .tracer import trace


def scale(x, factor):
    return x * factor  # op: mul (and its constant)


def kernel(a, b):
    s = a + b  # op: add
    t = scale(s, 3)
    return t - a  # op: sub


def main(package: str = "iree.compiler") -> str:
    ir = importlib.import_module(f"{package}.ir")
    graph = trace(kernel, 2)
    with new_context(package), ir.Location.unknown():
        module = emit(graph, package)
        return module.operation.get_asm(enable_debug_info=True)


if __name__ == "__main__":
    print(main(*sys.argv[1:2]))
