"""loxygen (a Lox tree-walking interpreter from the package index, its source untouched) wired
to callsite from here, as an interpreter author would do it without changing the interpreter:
one native.Executable per Lox function, a native frame per guest call (the decorator form:
visible on 3.12+), the call site's line in the frame's state, each activation's own
variables on its frame.

The program raises in a host (Python) function at guest depth 3; the reporters' tests
(tests/integrations/reporters/) look at that exception with each tool. The guest program is
either a file on disk or held in memory (`source=`: no file exists under its name).
"""
from __future__ import annotations

import contextlib
import pathlib

from callsite import native

PROGRAM = """\
fun fact(n) {
  if (n < 2) return check(n);
  var rest = fact(n - 1);
  return n * rest;
}
print fact(3);
"""
LINES = PROGRAM.splitlines()
CHECK_LINE, RECURSE_LINE, SCRIPT_LINE = 2, 3, 6

#: The guest frames of the exception, outermost first: (name, line, the frame's variables).
EXPECTED = [("<script>", SCRIPT_LINE, None),
            ("fact", RECURSE_LINE, {"n": 3.0}),
            ("fact", RECURSE_LINE, {"n": 2.0}),
            ("fact", CHECK_LINE, {"n": 1.0})]


class CheckFailed(Exception):
    pass


def check(n):
    """The host function the guest calls at depth 3: it raises there."""
    marker = "host-local"  # noqa: F841 - a Python frame's variable, for the tools to show
    raise CheckFailed(f"check({n}) failed")


class Guest:
    """The wiring: `with Guest(path, in_memory) as g: exc = g.run()`."""

    def __init__(self, path: pathlib.Path, in_memory: bool):
        self.filename = str(path)
        self.in_memory = in_memory
        if not in_memory:
            path.write_text(PROGRAM)
        self.executables: dict[str, native.Executable] = {}
        self.framed: dict[object, object] = {}
        self.pending: list[tuple[object, dict]] = []

    def executable(self, name: str) -> native.Executable:
        exe = self.executables.get(name)
        if exe is None:
            extra = {"source": PROGRAM} if self.in_memory else {}
            exe = self.executables[name] = native.Executable(
                name, kind="lox", visible=native.visible_frames_available(),
                locations=[native.Location(self.filename, line, name=name)
                           for line in range(1, len(LINES) + 1)], **extra)
        return exe

    def __enter__(self) -> Guest:
        from loxygen.interpreter import Interpreter
        from loxygen.lox_function import LoxFunction

        self._patches = contextlib.ExitStack()
        guest = self
        original_call = LoxFunction.call
        original_block = Interpreter.execute_block
        original_visit_call = Interpreter.visit_call_expr

        def activation(fn, interpreter, arguments):
            # Runs inside the guest call's native frame: its variables are the environment
            # LoxFunction.call is about to make (execute_block reports it), the parameters
            # until then.
            frame = native.current()
            box: dict = {}
            params = [p.lexeme for p in fn.declaration.params]
            frame.locals = lambda state: (box["env"].values if "env" in box
                                          else dict(zip(params, arguments)))
            guest.pending.append((fn.declaration.body, box))
            return original_call(fn, interpreter, arguments)

        def call(fn, interpreter, arguments):
            framed = guest.framed.get(fn.declaration)
            if framed is None:
                decl = fn.declaration
                framed = guest.framed[decl] = native.frame(
                    guest.executable(decl.name.lexeme), decl.name.line - 1)(activation)
            return framed(fn, interpreter, arguments)

        def execute_block(interpreter, statements, environment):
            if guest.pending and guest.pending[-1][0] is statements:
                guest.pending.pop()[1]["env"] = environment
            return original_block(interpreter, statements, environment)

        def visit_call_expr(interpreter, expression):
            frame = native.current()
            if frame is not None:
                frame.state = expression.paren.line - 1  # the call's line, as f_lineno is
            return original_visit_call(interpreter, expression)

        for owner, name, value in ((LoxFunction, "call", call),
                                   (Interpreter, "execute_block", execute_block),
                                   (Interpreter, "visit_call_expr", visit_call_expr)):
            self._patches.enter_context(_patched(owner, name, value))
        return self

    def __exit__(self, *exc) -> None:
        self._patches.close()

    def run(self) -> CheckFailed:
        """Runs the program; returns the exception check() raised at guest depth 3."""
        from loxygen.interpreter import Interpreter
        from loxygen.lox_callable import Callable
        from loxygen.parser import Parser
        from loxygen.resolver import Resolver
        from loxygen.scanner import Scanner

        class Host(Callable):
            def call(self, interpreter, arguments):
                return check(*arguments)

            def arity(self):
                return 1

        interpreter = Interpreter()
        interpreter.globals.define("check", Host())
        scanner = Scanner(PROGRAM)
        scanner.scan_tokens()
        statements = Parser(scanner.tokens).parse()
        Resolver(interpreter).resolve(*statements)

        def script(interpreter, statements):
            native.current().locals = {}
            interpreter.interpret(*statements)

        try:
            native.frame(self.executable("<script>"), SCRIPT_LINE - 1)(script)(
                interpreter, statements)
        except CheckFailed as e:
            return e
        raise AssertionError("the guest program did not raise")


@contextlib.contextmanager
def _patched(owner, name, value):
    original = owner.__dict__[name]
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


def guest_source(line: int) -> str:
    """The guest program's line `line`, stripped (what a tool should show for it)."""
    return LINES[line - 1].strip()
