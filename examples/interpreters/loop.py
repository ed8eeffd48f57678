"""A loop interpreter: guest frames in the interpreter's own list, one evaluation loop, no
Python call per guest call (the shape of a WebAssembly or bytecode interpreter).

callsite's pattern for it (docs/native.md, "Loop interpreters"):

- one ``native.Executable`` per guest function, whose state is the guest pc;
- a ``native.NativeFrame`` per guest activation, ``push()``-ed on the guest call and
  ``pop()``-ed on the guest return, its ``state`` set to the pc before each instruction.
  Both are called by the loop's own function: a frame belongs to the Python frame that
  pushed it (captures list it just inside that frame, tracebacks put its entry after that
  frame's), so a push made by a helper function that returns would place it wrongly;
- an exception leaving the loop pops the remaining activations innermost first with
  ``pop(exc)``, which puts each activation's entry into the exception's traceback.

Captures taken anywhere below the loop (a host function the guest calls) then read
``host → guest (innermost) … guest (outermost) → run → …``, and tracebacks of exceptions
raised at any guest depth list the guest frames between ``run`` and the raise. Tools that walk
``sys._getframe`` see ``run`` only: the guest frames are not interpreter frames.

The guest language, one instruction per line::

    fn NAME PARAM...        a function (its body runs to the next `fn`)
    LABEL:                  a jump target
    push K | get X | set X  constants and locals
    add | sub | mul | div | lt
    jz LABEL                jump if the value popped is zero
    call NAME N             a guest call with N arguments
    host NAME N             a call of a host (Python) function with N arguments
    ret                     return the value on top of the stack

Run it: ``python examples/interpreters/loop.py`` prints a capture taken by a host function at
guest depth 4, and the traceback of a division by zero at guest depth 4.
"""
from __future__ import annotations

import operator
import sys
import traceback

from callsite import native

BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul,
          "div": operator.truediv, "lt": operator.lt}


class Function:
    """One guest function: its instructions, the source line of each, and its executable."""

    def __init__(self, name: str, params: list[str], filename: str, line: int):
        self.name, self.params, self.filename, self.line = name, params, filename, line
        self.code: list[tuple[str, ...]] = []
        self.lines: list[int] = []
        self.labels: dict[str, int] = {}
        self.executable: native.Executable | None = None

    def finish(self) -> None:
        # State k is instruction k; one location per instruction, known before any frame runs.
        self.executable = native.Executable(
            self.name, kind="loop",
            locations=[native.Location(self.filename, line, name=self.name)
                       for line in self.lines] or [native.Location(self.filename, self.line)])


def parse(source: str, filename: str) -> dict[str, Function]:
    functions: dict[str, Function] = {}
    fn = None
    for lineno, text in enumerate(source.splitlines(), 1):
        words = text.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "fn":
            fn = functions[words[1]] = Function(words[1], words[2:], filename, lineno)
        elif fn is None:
            raise SyntaxError(f"{filename}:{lineno}: an instruction outside a function")
        elif words[0].endswith(":"):
            fn.labels[words[0][:-1]] = len(fn.code)
        else:
            fn.code.append(tuple(words))
            fn.lines.append(lineno)
    for fn in functions.values():
        fn.finish()
    return functions


class Activation:
    """A guest frame: the interpreter's own record, plus the native frame callsite reads
    (pushed by run(), the loop, not here: see the module's docstring)."""

    __slots__ = ("fn", "pc", "vars", "stack", "native")

    def __init__(self, fn: Function, args: list[object]):
        self.fn, self.pc, self.stack = fn, 0, []
        self.vars = dict(zip(fn.params, args))
        self.native = native.NativeFrame(fn.executable)


def run(functions: dict[str, Function], entry: str, args: list[object],
        host: dict[str, object]) -> object:
    """Runs guest function `entry`: every guest call and return stays in this one loop."""
    frames = [Activation(functions[entry], list(args))]
    frames[-1].native.push()
    try:
        while True:
            act = frames[-1]
            op = act.fn.code[act.pc]
            act.native.state = act.pc  # captures and tracebacks from here on show this line
            act.pc += 1
            kind = op[0]
            if kind == "push":
                act.stack.append(float(op[1]))
            elif kind == "get":
                act.stack.append(act.vars[op[1]])
            elif kind == "set":
                act.vars[op[1]] = act.stack.pop()
            elif kind in BINARY:
                right = act.stack.pop()
                act.stack.append(BINARY[kind](act.stack.pop(), right))
            elif kind == "jz":
                if not act.stack.pop():
                    act.pc = act.fn.labels[op[1]]
            elif kind == "call":
                n = int(op[2])
                call_args = act.stack[len(act.stack) - n:]
                del act.stack[len(act.stack) - n:]
                frames.append(Activation(functions[op[1]], call_args))
                frames[-1].native.push()
            elif kind == "host":
                n = int(op[2])
                call_args = act.stack[len(act.stack) - n:]
                del act.stack[len(act.stack) - n:]
                act.stack.append(host[op[1]](*call_args))
            elif kind == "ret":
                value = act.stack.pop()
                frames.pop().native.pop()
                if not frames:
                    return value
                frames[-1].stack.append(value)
            else:
                raise SyntaxError(f"unknown instruction {kind!r}")
    except BaseException as exc:
        # Innermost first: each pop(exc) puts its activation's entry right after run's own,
        # in front of the entries already there, so the traceback reads run → outermost
        # guest frame → … → innermost → where it was raised.
        while frames:
            frames.pop().native.pop(exc)
        raise


PROGRAM = """\
fn fact n
  get n
  push 2
  lt
  jz recurse
  get n
  host probe 1
  ret
recurse:
  get n
  get n
  push 1
  sub
  call fact 1
  mul
  ret

fn countdown n
  get n
  jz zero
  get n
  push 1
  sub
  call countdown 1
  ret
zero:
  push 1
  push 0
  div
  ret
"""


def main() -> int:
    import callsite

    functions = parse(PROGRAM, "prog.loop")
    seen = []

    def probe(n):
        seen.append(callsite.capture())
        return n

    print("fact(4) =", run(functions, "fact", [4.0], {"probe": probe}))
    print("".join(seen[0].format()))
    try:
        run(functions, "countdown", [3.0], {})
    except ZeroDivisionError:
        traceback.print_exc(file=sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
