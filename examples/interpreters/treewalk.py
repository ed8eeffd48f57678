"""A tree-walking interpreter wired to callsite, end to end (docs/native.md, "For interpreter
authors"): a small Lisp whose program is held in memory (no file), with a recursive guest
function.

- one ``native.Executable`` per guest function (``source=``: the program text, so tools show
  its lines without a file; ``visible=`` where this Python has visible frames);
- every guest call runs through that function's framed call (``native.frame(exe, line)``):
  a native frame per activation, a real interpreter frame on 3.12+;
- in the activation, ``native.current()`` is its frame: ``frame.state`` is the line of the
  form being evaluated, ``frame.locals`` the activation's own environment (read only when a
  tool looks).

Run it: ``python examples/interpreters/treewalk.py`` prints (fact 5), then the traceback of a
host function raising at guest depth 3, with each guest frame's line, source and variables.
"""
from __future__ import annotations

import re
import sys
import traceback

from callsite import native

PROGRAM = """\
(define (fact n)
  (if (< n 2)
      (check n)
      (* n (fact (- n 1)))))
(print (fact 5))
"""
FILENAME = "/virtual/fact.lisp"  # held in memory: no file by this name


class Form(list):
    """A parenthesised form and the line it starts on."""

    def __init__(self, items, line):
        super().__init__(items)
        self.line = line


def parse(text: str) -> list:
    tokens = [(m.group(), text.count("\n", 0, m.start()) + 1)
              for m in re.finditer(r"[()]|[^\s()]+", text)]
    pos = 0

    def read():
        nonlocal pos
        token, line = tokens[pos]
        pos += 1
        if token == "(":
            items = []
            while tokens[pos][0] != ")":
                items.append(read())
            pos += 1
            return Form(items, line)
        return int(token) if token.lstrip("-").isdigit() else token

    forms = []
    while pos < len(tokens):
        forms.append(read())
    return forms


class Interpreter:
    def __init__(self, source: str, filename: str, host: dict):
        self.source, self.filename = source, filename
        self.globals = {"<": lambda a, b: a < b, "*": lambda a, b: a * b,
                        "-": lambda a, b: a - b, "print": print, **host}
        self.lines = source.count("\n") + 1

    def executable(self, name: str) -> native.Executable:
        # State k is line k + 1 of the program; the program's text goes with the executable.
        return native.Executable(
            name, kind="lisp", visible=native.visible_frames_available(), source=self.source,
            locations=[native.Location(self.filename, line, name=name)
                       for line in range(1, self.lines + 1)])

    def define(self, form: Form) -> None:
        (name, *params), body = form[1], form[2]
        interp = self

        def activation(*args):
            frame = native.current()  # this call's frame
            env = dict(zip(params, args))
            frame.locals = env  # each activation its own variables
            return interp.eval(body, env, frame)

        self.globals[name] = native.frame(self.executable(name), form.line - 1)(activation)

    def eval(self, node, env: dict, frame):
        if isinstance(node, int):
            return node
        if isinstance(node, str):
            return env[node] if node in env else self.globals[node]
        frame.state = node.line - 1  # the guest line being evaluated
        if node[0] == "if":
            branch = node[2] if self.eval(node[1], env, frame) else node[3]
            return self.eval(branch, env, frame)
        fn = self.eval(node[0], env, frame)
        return fn(*[self.eval(arg, env, frame) for arg in node[1:]])

    def run(self) -> None:
        script = native.frame(self.executable("<program>"), 0)(self._run)
        script()

    def _run(self) -> None:
        frame = native.current()
        frame.locals = {}
        for form in parse(self.source):
            if form[0] == "define":
                self.define(form)
            else:
                self.eval(form, {}, frame)


def main() -> int:
    Interpreter(PROGRAM, FILENAME, {"check": lambda n: n}).run()  # prints 120

    def check(n):
        raise ValueError(f"check failed at n={n}")

    try:
        Interpreter(PROGRAM.replace("fact 5", "fact 3"), FILENAME, {"check": check}).run()
    except ValueError as e:
        summary = traceback.TracebackException.from_exception(e, capture_locals=True)
        for entry in summary.stack:
            if entry.filename == FILENAME:
                print(f"{entry.filename}:{entry.lineno} in {entry.name}: {entry.line}  "
                      f"{entry.locals}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
