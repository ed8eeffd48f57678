"""tinydsl — a minimal Python DSL over MLIR's Python bindings: the framework (a library).

Kernels are plain Python functions over `Value`s; operators build `arith` ops, `fori` builds an
`scf.for` loop, and calling one kernel from another builds a `func.call`. Nothing here passes a
location for the ops it builds: callsite.mlir.auto_locations supplies the user's source line.
"""
from __future__ import annotations

import inspect

try:  # the default distribution of the bindings, then upstream MLIR's
    from iree.compiler import ir
    from iree.compiler.dialects import arith, func, scf
except ImportError:  # pragma: no cover - depends on what is installed
    from mlir import ir
    from mlir.dialects import arith, func, scf


def i32() -> ir.Type:
    return ir.IntegerType.get_signless(32)


class Value:
    """An SSA value of type i32 with Python operators."""

    def __init__(self, value: ir.Value):
        self.value = value

    @staticmethod
    def lift(x) -> Value:
        return x if isinstance(x, Value) else const(x)

    def __add__(self, other):
        return Value(arith.addi(self.value, Value.lift(other).value))

    def __sub__(self, other):
        return Value(arith.subi(self.value, Value.lift(other).value))

    def __mul__(self, other):
        return Value(arith.muli(self.value, Value.lift(other).value))

    __radd__ = __add__
    __rmul__ = __mul__


def const(x: int) -> Value:
    return Value(arith.constant(i32(), x))


def fori(lo: int, hi: Value | int, init: Value | int, body) -> Value:
    """`acc = init; for i in range(lo, hi): acc = body(i, acc)` as one scf.for."""
    index = ir.IndexType.get()
    cast = lambda v: arith.index_cast(index, Value.lift(v).value)  # noqa: E731
    loop = scf.ForOp(cast(lo), cast(hi), arith.constant(index, 1), [Value.lift(init).value])
    with ir.InsertionPoint(loop.body):
        i = Value(arith.index_cast(i32(), loop.induction_variable))
        scf.YieldOp([Value.lift(body(i, Value(loop.inner_iter_args[0]))).value])
    return Value(loop.results[0])


class Kernel:
    """A @kernel function: built into a func.func; called from another kernel, a func.call."""

    def __init__(self, fn):
        self.fn = fn
        self.arity = len(inspect.signature(fn).parameters)
        self.op: func.FuncOp | None = None

    def definition_location(self) -> ir.Location:
        """Where the kernel is defined: an explicit loc= (auto_locations keeps it)."""
        code = self.fn.__code__
        return ir.Location.name(self.fn.__qualname__,
                                childLoc=ir.Location.file(code.co_filename, code.co_firstlineno, 0))

    def build(self) -> func.FuncOp:
        loc = self.definition_location()
        ty = ir.FunctionType.get([i32()] * self.arity, [i32()])
        self.op = func.FuncOp(self.fn.__name__, ty, loc=loc)
        block = self.op.add_entry_block(arg_locs=[loc] * self.arity)
        with ir.InsertionPoint(block):
            result = Value.lift(self.fn(*(Value(a) for a in block.arguments)))
            func.ReturnOp([result.value], loc=loc)  # built by the framework: the kernel's loc
        return self.op

    def __call__(self, *args):
        if self.op is None:
            raise RuntimeError(f"kernel {self.fn.__name__} is called before it is built")
        call = func.CallOp(self.op, [Value.lift(a).value for a in args])
        return Value(call.result)


def kernel(fn) -> Kernel:
    return Kernel(fn)


def build_module(kernels) -> ir.Module:
    """A module with every kernel, in order (callees first). Needs a current Context and
    Location (the fallback for what auto_locations does not cover)."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        for k in kernels:
            k.build()
    return module
