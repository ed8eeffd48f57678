"""The native-frames section of ``python -m callsite demo``: the calc interpreter of
examples/interp/ (C++, built as the private extension ``callsite._calc``) runs a small program
whose functions call back into Python, and callsite shows the interpreted frames in place."""
from __future__ import annotations

import io
import pdb
import sys
import traceback
from typing import Callable, TextIO

from .._callsite import Traceback, capture

PROGRAM = """\
fn area(w, h)
  let a = w * h
  return scale(a)
end

fn total(n)
  let sum = 0
  let i = 1
  while i <= n
    let sum = sum + area(i, i + 1)
    let i = i + 1
  end
  return check(sum)
end
"""


def main(out: TextIO | None = None) -> None:
    """Runs the calc program twice: a capture inside a Python callback, then an exception
    raised in one, both showing the interpreted frames between the Python ones."""
    write = (out or sys.stdout).write
    captured: list[Traceback] = []

    def scale(a: int) -> int:
        if not captured:
            captured.append(capture())
        return a * 2

    def check(total: int) -> int:
        if total > 30:
            raise ValueError(f"total {total} is over budget")
        return total

    from .._calc import Program  # the examples/interp/ interpreter, a private extension

    program = Program(PROGRAM, "demo.calc", {"scale": scale, "check": check})
    write("native frames: a calc program interpreted in C++ (the interpreter of examples/interp/)\n")
    for i, line in enumerate(PROGRAM.splitlines(), 1):
        write(f"  {i:3} | {line}\n")
    write("\ncallsite.capture() in the Python callback scale(), innermost first:\n")
    program.call("total", 2)
    for f in captured[0]:
        write(f"  [{f.kind:6}] {f}\n")
    write("\nan exception raised in the Python callback check(), via traceback.format_exception:\n")
    try:
        program.call("total", 3)
    except ValueError as e:
        for line in traceback.format_exception(type(e), e, e.__traceback__):
            write("  " + line.replace("\n", "\n  ").rstrip(" "))
        post_mortem(e, write)


def post_mortem(e: BaseException, write: Callable[[str], object]) -> None:
    """pdb.post_mortem on the exception, driven by scripted commands: `up` into the calc frame
    total(), whose variables (its environment, read by the interpreter's locals reifier when
    the exception passed the frame) pdb prints like a Python frame's."""
    commands = ["up", "p sum", "p i", "quit"]
    write("\npdb.post_mortem() on it, with the commands " + ", ".join(commands) + ":\n")
    buffer = io.StringIO()
    debugger = pdb.Pdb(stdin=io.StringIO("\n".join(commands) + "\n"), stdout=buffer,
                       nosigint=True, readrc=False)
    debugger.use_rawinput = False
    debugger.reset()
    debugger.interaction(None, e.__traceback__)
    for line in buffer.getvalue().splitlines():
        write(f"  {line}\n")
