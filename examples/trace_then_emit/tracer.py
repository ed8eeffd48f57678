"""tracer — the trace half of a small trace-then-emit DSL (the framework, a library).

User code runs on `Tensor` values; every operation appends a `Node` to the current `Graph`
instead of building MLIR. Nothing is emitted yet, so a stack walked at emit time would name
the emitter, not the user. Each node therefore keeps a `callsite.Traceback` captured when the
user's line runs: raw (code object, instruction offset) pairs, 16 bytes a frame, with no line
looked up and no string made. The emitter turns it into a location later.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

import callsite

#: The framework's own frames are not the user's: every file of this DSL is excluded. (The
#: example's program file lives beside them, so the rule names files, not the directory.)
HERE = os.path.dirname(os.path.abspath(__file__))
FRAMEWORK_FILTER = callsite.Filter()
for _name in ("tracer.py", "emit.py"):
    FRAMEWORK_FILTER.exclude_file(os.path.join(HERE, _name))


@dataclass
class Node:
    op: str                      # "const", "add", "mul", "sub"
    inputs: tuple[int, ...]      # indices of earlier nodes
    value: int | None            # the constant of a "const" node
    traceback: callsite.Traceback  # where the user's line ran, captured raw


@dataclass
class Graph:
    nodes: list[Node] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)

    def add(self, op: str, inputs: tuple[int, ...], value: int | None = None) -> Tensor:
        # skip=1: the traceback starts at the caller of add() (a Tensor operator); the
        # framework's frames above the user's are then dropped by FRAMEWORK_FILTER at emit time.
        self.nodes.append(Node(op, inputs, value, callsite.capture(1)))
        return Tensor(self, len(self.nodes) - 1)


class Tensor:
    """A traced value: operators record nodes."""

    def __init__(self, graph: Graph, index: int):
        self.graph, self.index = graph, index

    def _other(self, other: Tensor | int) -> int:
        if isinstance(other, Tensor):
            return other.index
        return self.graph.add("const", (), int(other)).index

    def __add__(self, other: Tensor | int) -> Tensor:
        return self.graph.add("add", (self.index, self._other(other)))

    def __sub__(self, other: Tensor | int) -> Tensor:
        return self.graph.add("sub", (self.index, self._other(other)))

    def __mul__(self, other: Tensor | int) -> Tensor:
        return self.graph.add("mul", (self.index, self._other(other)))


def trace(fn, n_args: int) -> Graph:
    """Runs `fn` on `n_args` traced arguments and records what it computes."""
    graph = Graph()
    args = [graph.add("arg", (), i) for i in range(n_args)]
    result = fn(*args)
    graph.outputs.append(result.index)
    return graph
