# bench/bench_interp.py — a tree-walking interpreter written in Python, with and without a
# native frame per guest call.
"""What callsite costs an interpreter written in Python that wraps every guest call in a native
frame and stores the guest line in its state before every guest statement (docs/native.md, "For
interpreter authors"). One guest program (recursive fib) in four forms, interleaved round-robin
in one process, minimum of the repeats: plain (no callsite); python-wrapped (the same wiring in
pure Python, `__slots__` frames in a list); framed (a native frame per guest call, visible on
3.12+); framed + locals (each activation's variables given to its frame, read by nobody). And a
real interpreter, loxygen (3.12+, skipped when missing): "lox plain", and "lox framed" wired by
tests/support/guest_lox.py.

Reported, as the benchmarks page's table (docs/_ext/benchmark_tables.py's interp_table):
instructions per guest call (bench/_callgrind.py's per_iteration over fib(N1) and fib(N2), the
cyclic collector off as while timing), those executed inside callsite's extension module, and
ns per guest call by the process's CPU time and the wall clock, each against its plain form.
`--keep-callgrind DIR` keeps each form's callgrind file of fib(N2), for callgrind_annotate.

    python bench/bench_interp.py [--quick] [--no-callgrind] [--keep-callgrind DIR] [--json PATH]
"""
from __future__ import annotations

import functools
import os
import sys
import tempfile
import time

from callsite import native
from callsite._cli.timing import Timing, clock, minima, round_robin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _callgrind  # noqa: E402
import _common  # noqa: E402
import callgrind_breakdown  # noqa: E402

# --- the guest language: a tree of nodes, each with its line ------------------------------

GUEST = """\
fn fib(n)
  if n < 2
    return n
  end
  return fib(n - 1) + fib(n - 2)
end
"""


class Return(Exception):
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Node:
    """A node of the tree: its guest line, then its own fields (its class's __slots__)."""

    __slots__ = ("line",)

    def __init__(self, line, *fields):
        self.line = line
        for name, value in zip(self.__slots__, fields, strict=True):
            setattr(self, name, value)


class Const(Node):
    __slots__ = ("value",)

    def eval(self, interp, env):
        return self.value


class Var(Node):
    __slots__ = ("name",)

    def eval(self, interp, env):
        return env.vars[self.name]


class BinOp(Node):
    __slots__ = ("op", "left", "right")
    OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "<": lambda a, b: a < b}

    def __init__(self, line, op, left, right):
        self.line, self.op, self.left, self.right = line, self.OPS[op], left, right

    def eval(self, interp, env):
        return self.op(self.left.eval(interp, env), self.right.eval(interp, env))


class Call(Node):
    __slots__ = ("name", "args")

    def eval(self, interp, env):
        return interp.call(interp.functions[self.name], [a.eval(interp, env) for a in self.args])


class If(Node):
    __slots__ = ("cond", "body")

    def exec(self, interp, env):
        if self.cond.eval(interp, env):
            interp.exec_block(self.body, env)


class Ret(Node):
    __slots__ = ("value",)

    def exec(self, interp, env):
        raise Return(self.value.eval(interp, env))


class Function:
    def __init__(self, name, params, body, line):
        self.name, self.params, self.body, self.line = name, params, body, line
        self.framed = None  # the framed interpreter's FramedFunction for this function


class Env:
    __slots__ = ("vars", "frame")

    def __init__(self, vars):
        self.vars, self.frame = vars, None


def parse_fib():
    """GUEST as a tree (a parser is not what is measured)."""
    n = lambda line: Var(line, "n")  # noqa: E731
    body = [If(2, BinOp(2, "<", n(2), Const(2, 2)), [Ret(3, n(3))]),
            Ret(5, BinOp(5, "+", Call(5, "fib", [BinOp(5, "-", n(5), Const(5, 1))]),
                         Call(5, "fib", [BinOp(5, "-", n(5), Const(5, 2))])))]
    return {"fib": Function("fib", ["n"], body, 1)}


class Interp:
    """No callsite: the baseline. run_body is the framed forms' too (one flag test apart)."""

    framed = with_locals = False

    def __init__(self, functions):
        self.functions = functions

    def call(self, fn, args):
        return self.run_body(fn, args)

    def run_body(self, fn, args):
        env = Env(dict(zip(fn.params, args)))
        if self.framed:
            env.frame = native.current()  # this guest call's frame
            if self.with_locals:
                env.frame.locals = env.vars
        try:
            self.exec_block(fn.body, env)
        except Return as r:
            return r.value
        return None

    def exec_block(self, body, env):
        for stmt in body:
            stmt.exec(self, env)


class FramedInterp(Interp):
    """A native frame per guest call (FramedFunction: visible on 3.12+), the guest line in
    its state before every statement."""

    def __init__(self, functions):
        super().__init__(functions)
        lines = GUEST.count("\n") + 1
        for fn in functions.values():
            exe = native.Executable(
                fn.name, kind="guest", visible=native.visible_frames_available(),
                locations=[native.Location("fib.guest", line, name=fn.name)
                           for line in range(lines + 1)])
            fn.framed = native.frame(exe, fn.line)(self.run_body)

    framed = True

    def call(self, fn, args):
        return fn.framed(fn, args)

    def exec_block(self, body, env):
        frame = env.frame
        for stmt in body:
            frame.state = stmt.line
            stmt.exec(self, env)


class FramedLocalsInterp(FramedInterp):
    """The framed interpreter whose frames also carry each activation's variables."""

    with_locals = True


class PyFrame:
    """A stand-in for a native frame: what the same wiring costs in pure Python."""

    __slots__ = ("state", "locals")


class PyWrappedInterp(FramedInterp):
    """The framed interpreter's wiring with no callsite: a Python wrapper per guest function
    keeps a list of PyFrame objects, current() returns its last (the cost of the wiring
    itself, for comparison)."""

    def __init__(self, functions):
        Interp.__init__(self, functions)
        stack = self.stack = []

        def wrap(body):
            def call(fn, args):
                frame = PyFrame()
                frame.state = 0
                stack.append(frame)
                try:
                    return body(fn, args)
                finally:
                    stack.pop()
            return call

        for fn in functions.values():
            fn.framed = wrap(self.run_body)

    def run_body(self, fn, args):
        env = Env(dict(zip(fn.params, args)))
        env.frame = self.stack[-1]
        try:
            self.exec_block(fn.body, env)
        except Return as r:
            return r.value
        return None


FORMS = {"plain": Interp, "python-wrapped": PyWrappedInterp, "framed": FramedInterp,
         "framed+locals": FramedLocalsInterp,
         "lox plain": False, "lox framed": True}
LOX_FORMS = ("lox plain", "lox framed")


# --- a real interpreter: loxygen, wired by the tests' support module -----------------------

LOX_FIB = """\
fun fib(n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}
var result = fib(%d);
"""


def run_lox(framed, n):
    """fib(n) in Lox; `framed`: inside guest_lox's wiring (its patches undone at the end)."""
    import contextlib
    import pathlib

    from loxygen.interpreter import Interpreter
    from loxygen.parser import Parser
    from loxygen.resolver import Resolver
    from loxygen.scanner import Scanner

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                    "support"))
    import guest_lox

    wiring = (guest_lox.Guest(pathlib.Path("/bench/fib.lox"), in_memory=True) if framed
              else contextlib.nullcontext())
    with wiring:
        interpreter = Interpreter()
        scanner = Scanner(LOX_FIB % n)
        scanner.scan_tokens()
        statements = Parser(scanner.tokens).parse()
        Resolver(interpreter).resolve(*statements)
        interpreter.interpret(*statements)
        return interpreter.globals.values["result"]


@functools.cache
def fib_calls(n):
    """Guest calls fib(n) makes, itself included."""
    return 1 if n < 2 else 1 + fib_calls(n - 1) + fib_calls(n - 2)


def refusal(form):
    """Why `form` cannot run here, or None."""
    if form in LOX_FORMS:
        try:
            import loxygen.interpreter  # noqa: F401
        except ImportError as e:
            return f"loxygen not installed ({e})"
    return None


def run(form, n):
    if form in LOX_FORMS:
        return run_lox(FORMS[form], n)
    interp = FORMS[form](parse_fib())
    return interp.call(interp.functions["fib"], [n])


def check_forms(n=12):
    for form in FORMS:
        if not refusal(form):
            assert run(form, n) == run("plain", n), form


def time_forms(forms, n, lox_n, repeats):
    """ns per guest call of each of `forms`, wall clock and the process's CPU time: min over
    interleaved repeats (CPU time leaves out the time spent waiting for a core on a loaded
    machine)."""
    cpu = {f: Timing() for f in forms}

    def timed(f, _):
        size = lox_n if f in LOX_FORMS else n
        t0, c0 = clock(), time.process_time_ns()
        run(f, size)
        c1, t1 = time.process_time_ns(), clock()
        cpu[f].samples.append((c1 - c0) / fib_calls(size))
        return (t1 - t0) / fib_calls(size)

    wall = round_robin(timed, forms, repeats=repeats)
    return minima(wall), minima(cpu)


# The cyclic collector off, as in the timed runs: its passes depend on the heap as a whole
# and would put a few hundred instructions of noise into the difference of the two runs.
CG_CHILD = ("import gc, sys; sys.path.insert(0, {here!r}); import bench_interp as b; "
            "gc.disable(); b.run({form!r}, int(sys.argv[1]))")


def instructions_per_call(form, n1, n2, keep=None):
    """(instructions per guest call of `form`, those executed inside callsite's extension
    module), from callgrind runs of fib(n1) and fib(n2); `keep`: a folder for the fib(n2) run's
    file, with per-instruction detail. Raises _callgrind.CallgrindError."""
    child = CG_CHILD.format(here=os.path.dirname(os.path.abspath(__file__)), form=form)
    with tempfile.TemporaryDirectory() as tmp:
        files = {n: os.path.join(tmp, f"{n}.out") for n in (n1, n2)}
        if keep:
            files[n2] = os.path.join(keep, f"callgrind-interp-{form.replace(' ', '-')}.out")
        total = _callgrind.per_iteration(
            lambda n: [sys.executable, "-c", child, str(n)], n1, n2, units=fib_calls,
            out_of=files.get, extra=["--dump-instr=yes"] if keep else ())
        ours = [callgrind_breakdown.object_self(files[n], "_callsite") for n in (n1, n2)]
    return total, (ours[1] - ours[0]) / (fib_calls(n2) - fib_calls(n1))


def instruction_counts(form, counts):
    """{"instructions", "callsite_instructions"} per guest call of `form`, or
    {"no_instructions": why}; `counts`: (n1, n2, folder to keep files in), None for none."""
    if counts is None:
        return {"no_instructions": "--no-callgrind"}
    if why := _callgrind.missing():
        return {"no_instructions": why}
    try:
        total, ours = instructions_per_call(form, *counts)
    except _callgrind.CallgrindError as e:
        return {"no_instructions": f"callgrind failed: {str(e)[-200:]}"}
    return {"instructions": total, "callsite_instructions": ours}


def main():
    ap = _common.parser(__doc__.split("\n\n")[0], repeats=9,
                        quick="fib(16), Lox fib(12), 3 repeats")
    ap.add_argument("--fib", type=_common.count, default=22, help="guest fib(N) per timed run")
    ap.add_argument("--lox-fib", type=_common.count, default=18, help="Lox fib(N) per timed run")
    ap.add_argument("--no-callgrind", action="store_true", help="skip instruction counts")
    ap.add_argument("--keep-callgrind", metavar="DIR", type=_common.output_dir,
                    help="keep each form's callgrind file of the larger run here "
                         "(callgrind-interp-<form>.out, with --dump-instr=yes)")
    args = ap.parse_args()
    if args.keep_callgrind and args.no_callgrind:
        ap.error("--keep-callgrind keeps the files of the instruction counts, which "
                 "--no-callgrind skips")
    n, lox_n, repeats = (16, 12, 3) if args.quick else (args.fib, args.lox_fib, args.repeats)
    check_forms()
    skipped = {form: why for form in FORMS if (why := refusal(form))}
    print(f"Python {sys.version.split()[0]}, visible frames: "
          f"{native.visible_frames_refusal() or 'yes'}; guest fib({n}) = {fib_calls(n)} calls "
          f"(Lox: fib({lox_n}) = {fib_calls(lox_n)}), min of {repeats} interleaved repeats, "
          f"load average at start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores\n")
    for form, why in skipped.items():
        print(f"{form}: skipped ({why})")
    counts = None if args.no_callgrind else (10, 14 if args.quick else 16, args.keep_callgrind)
    ns, cpu_ns = time_forms([f for f in FORMS if f not in skipped], n, lox_n, repeats)
    forms = {form: {"base": "lox plain" if form in LOX_FORMS else "plain", "ns": ns[form],
                    "cpu_ns": cpu_ns[form], **instruction_counts(form, counts)} for form in ns}
    result = {"fib": n, "lox_fib": lox_n, "repeats": repeats, "skipped": skipped,
              "visible_frames": native.visible_frames_refusal() is None, "forms": forms}
    print(_common.page_table(_common.page_tables().interp_table(result)))
    if args.json:
        _common.write_results(args.json, "interp", result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
