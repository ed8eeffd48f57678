"""tests/support/progen.py — seeded generator of random valid Python programs that call PROBE().

`generate(seed)` returns the source of a program that, run with `PROBE` in its globals,
calls PROBE() from inside nested functions, closures, lambdas, comprehensions, generators,
coroutines, class bodies, methods, decorators, recursion, exception handlers, with-blocks,
exec/eval'd code, f-strings, chained attribute calls and multi-line call expressions.
Every expression the generator builds evaluates to an int (PROBE() returns 0), so any
construct can wrap any other. `python tests/support/progen.py SEED [FEATURE...]` prints one program.

Scoping rule kept throughout: a construct's inner definitions are emitted in a function or
module scope, never in a class body, so inner expressions may be used from nested functions,
lambdas, comprehensions and class bodies inside that scope.
"""
from __future__ import annotations

import random
import sys

PRELUDE = '''\
import asyncio, contextlib, functools, types

def _run_co(c):
    try:
        c.send(None)
    except StopIteration as e:
        return e.value
    raise RuntimeError("coroutine suspended")

def _drive(g):
    v = next(g)
    try:
        g.send(1)
    except StopIteration:
        pass
    return v

_NS = types.SimpleNamespace(sub=types.SimpleNamespace(probe=PROBE))
_SILENT = [0]  # > 0: PROBE() returns at once (warm-up iterations of a hot loop)
'''

FEATURES = (
    "func", "multiline_call", "closure", "lambda", "listcomp", "dictcomp", "setcomp",
    "genexp", "generator", "yield_from", "async_send", "async_run", "class_body", "method",
    "staticmethod", "classmethod", "property", "decorator", "recursion", "try_except",
    "try_finally", "with_cm", "contextmanager", "exec", "eval", "fstring", "chain",
    "builtin_callback", "operator", "init", "hot_loop",
)
HOT_ITERATIONS = 40  # enough for CPython 3.11+ to specialize every instruction on the path


def _i(level: int) -> str:
    return "    " * level


class _Gen:
    def __init__(self, seed: int, features=None, max_depth=None):
        self.r = random.Random(seed)
        self.features = tuple(features) if features else FEATURES
        self.max_depth = max_depth if max_depth is not None else self.r.randint(3, 8)
        self.n = 0
        self.deep_used = False  # at most one deep (hundreds of frames) recursion per program

    def fresh(self) -> int:
        self.n += 1
        return self.n

    def k(self) -> int:
        return self.r.randint(0, 9)

    def maybe_probe(self, ind: int, p: float = 0.35) -> list[str]:
        return [_i(ind) + "PROBE()"] if self.r.random() < p else []

    # -- leaves -------------------------------------------------------------------------------
    def leaf(self, ind: int) -> str:
        c = self.r.randrange(7)
        if c == 1:
            return f"PROBE(\n{_i(ind + 1)}{self.k()},\n{_i(ind + 1)}key={self.k()},\n{_i(ind)})"
        if c == 2:
            return f"(PROBE()\n{_i(ind + 1)}+ PROBE())"
        if c == 3:
            return "PROBE(x=PROBE())"
        if c == 4:
            return "_NS.sub.probe()"
        if c == 5:
            return 'len(f"<{PROBE()}>")'
        return "PROBE()"

    # -- dispatch -----------------------------------------------------------------------------
    def gen(self, depth: int, ind: int, ctx: dict) -> tuple[list[str], str]:
        """(definitions at indent `ind`, an int expression valid in that scope)."""
        if depth >= self.max_depth or (depth > 0 and self.r.random() < 0.12):
            return [], self.leaf(ind)
        # asyncio.run cannot nest; a hot loop repeats its body HOT_ITERATIONS times, so it
        # takes no second hot loop, event loop or deep recursion below it.
        banned = set()
        if ctx.get("in_loop") or ctx.get("hot"):
            banned.add("async_run")
        if ctx.get("hot"):
            banned.add("hot_loop")
        choices = [f for f in self.features if f not in banned]
        if not choices:
            return [], self.leaf(ind)
        feat = self.r.choice(choices)
        return getattr(self, "f_" + feat)(depth, ind, ctx)

    def body(self, depth, ind, ctx):
        return self.gen(depth + 1, ind, ctx)

    # -- functions ----------------------------------------------------------------------------
    def f_func(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def f_{n}(a):", *self.maybe_probe(ind + 1), *d,
                 f"{_i(ind + 1)}return {e}"]
        return lines, f"f_{n}({self.k()})"

    def f_multiline_call(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def f_{n}(a, b=0, *rest, **kw):", *d, f"{_i(ind + 1)}return {e}"]
        if self.r.random() < 0.5:
            call = f"f_{n}(\n{_i(ind + 1)}{self.k()},\n{_i(ind + 1)}b={self.k()},\n{_i(ind)})"
        else:  # the Python call sits in a later argument of a multi-line builtin call
            call = f"max(\n{_i(ind + 1)}0,\n{_i(ind + 1)}f_{n}({self.k()}),\n{_i(ind)})"
        return lines, call

    def f_closure(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 2, ctx)
        lines = [f"{_i(ind)}def mk_{n}(c):", f"{_i(ind + 1)}def f_{n}(a):",
                 *self.maybe_probe(ind + 2), *d, f"{_i(ind + 2)}return c + {e}",
                 f"{_i(ind + 1)}return f_{n}"]
        return lines, f"mk_{n}(0)({self.k()})"

    def f_lambda(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        if self.r.random() < 0.5:
            return [*d, f"{_i(ind)}lam_{n} = lambda a: {e}"], f"lam_{n}({self.k()})"
        return d, f"(lambda a: {e})({self.k()})"

    # -- comprehensions (inlined on 3.12+) ----------------------------------------------------
    def _reps(self) -> int:
        return 2 if self.r.random() < 0.1 else 1

    def f_listcomp(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        return d, f"len([{e} for _i{n} in range({self._reps()})])"

    def f_dictcomp(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        return d, f"len({{_i{n}: {e} for _i{n} in range({self._reps()})}})"

    def f_setcomp(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        return d, f"len({{{e} for _i{n} in range({self._reps()})}})"

    def f_genexp(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        return d, f"sum({e} for _i{n} in range({self._reps()}))"

    # -- generators ---------------------------------------------------------------------------
    def _drive_gen(self, g: str) -> str:
        return self.r.choice([f"next({g})", f"_drive({g})", f"sum({g})"])

    def f_generator(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def gen_{n}(a):", *self.maybe_probe(ind + 1), *d,
                 f"{_i(ind + 1)}v = yield {e}", *self.maybe_probe(ind + 1, 0.5),
                 f"{_i(ind + 1)}yield a"]
        return lines, self._drive_gen(f"gen_{n}({self.k()})")

    def f_yield_from(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def sub_{n}(a):", *d, *self.maybe_probe(ind + 1),
                 f"{_i(ind + 1)}yield {e}", *self.maybe_probe(ind + 1, 0.5),
                 f"{_i(ind)}def gen_{n}(a):", f"{_i(ind + 1)}yield from sub_{n}(a)",
                 *self.maybe_probe(ind + 1, 0.5)]
        return lines, self._drive_gen(f"gen_{n}({self.k()})")

    # -- coroutines ---------------------------------------------------------------------------
    def _coroutines(self, n, depth, ind, ctx, sleep: bool):
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}async def co_{n}(a):", *d, *self.maybe_probe(ind + 1),
                 f"{_i(ind + 1)}return {e}", f"{_i(ind)}async def coo_{n}(a):"]
        if sleep:  # suspend once: resumed later by the event loop, not by our caller
            lines.append(f"{_i(ind + 1)}await asyncio.sleep(0)")
        lines += [f"{_i(ind + 1)}v = await co_{n}(a)", *self.maybe_probe(ind + 1),
                  f"{_i(ind + 1)}return v"]
        return lines

    def f_async_send(self, depth, ind, ctx):
        n = self.fresh()
        return self._coroutines(n, depth, ind, ctx, False), f"_run_co(coo_{n}({self.k()}))"

    def f_async_run(self, depth, ind, ctx):
        n = self.fresh()
        lines = self._coroutines(n, depth, ind, {**ctx, "in_loop": True}, self.r.random() < 0.5)
        return lines, f"asyncio.run(coo_{n}({self.k()}))"

    # -- classes ------------------------------------------------------------------------------
    def f_class_body(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def f_{n}(a):", *d, f"{_i(ind + 1)}class C_{n}:",
                 *self.maybe_probe(ind + 2), f"{_i(ind + 2)}v = {e}",
                 f"{_i(ind + 1)}return C_{n}.v"]
        return lines, f"f_{n}({self.k()})"

    def _method(self, depth, ind, ctx, decorator, sig, call):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def f_{n}(a):", *d, f"{_i(ind + 1)}class K_{n}:"]
        if decorator:
            lines.append(f"{_i(ind + 2)}@{decorator}")
        lines += [f"{_i(ind + 2)}def m({sig}):", *self.maybe_probe(ind + 3),
                  f"{_i(ind + 3)}return {e}", f"{_i(ind + 1)}return {call.format(n=n)}"]
        return lines, f"f_{n}({self.k()})"

    def f_method(self, depth, ind, ctx):
        return self._method(depth, ind, ctx, None, "self, a", "K_{n}().m(a)")

    def f_staticmethod(self, depth, ind, ctx):
        return self._method(depth, ind, ctx, "staticmethod", "a", "K_{n}.m(a)")

    def f_classmethod(self, depth, ind, ctx):
        return self._method(depth, ind, ctx, "classmethod", "cls, a", "K_{n}.m(a)")

    def f_property(self, depth, ind, ctx):
        return self._method(depth, ind, ctx, "property", "self", "K_{n}().m")

    def f_init(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        lines = [*d, f"{_i(ind)}class In_{n}:", f"{_i(ind + 1)}def __init__(self, a):",
                 *self.maybe_probe(ind + 2), f"{_i(ind + 2)}self.v = {e}"]
        return lines, f"In_{n}({self.k()}).v"

    def f_operator(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        op, dunder = self.r.choice([("+", "__add__"), ("*", "__mul__"), ("==", "__eq__")])
        lines = [*d, f"{_i(ind)}class Op_{n}:", f"{_i(ind + 1)}def {dunder}(self, other):",
                 *self.maybe_probe(ind + 2), f"{_i(ind + 2)}return int(other) + {e}"]
        if dunder == "__eq__":
            lines.append(f"{_i(ind + 1)}__hash__ = None")
        return lines, f"int(Op_{n}() {op} {self.k()})"

    def f_chain(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind, ctx)
        lines = [*d, f"{_i(ind)}class Ch_{n}:",
                 f"{_i(ind + 1)}def __init__(self, fn):", f"{_i(ind + 2)}self.fn = fn",
                 f"{_i(ind + 1)}def step(self):", *self.maybe_probe(ind + 2),
                 f"{_i(ind + 2)}return self", f"{_i(ind + 1)}@property",
                 f"{_i(ind + 1)}def me(self):", f"{_i(ind + 2)}return self",
                 f"{_i(ind + 1)}def go(self, a):", f"{_i(ind + 2)}return self.fn(a)"]
        if self.r.random() < 0.5:
            expr = f"Ch_{n}(lambda a: {e}).step().me.step().go({self.k()})"
        else:
            expr = (f"(Ch_{n}(lambda a: {e})\n{_i(ind + 1)}.step()\n{_i(ind + 1)}.me"
                    f"\n{_i(ind + 1)}.go({self.k()}))")
        return lines, expr

    # -- decorators and recursion -------------------------------------------------------------
    def f_decorator(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def deco_{n}(fn):", *self.maybe_probe(ind + 1, 0.3)]
        if self.r.random() < 0.5:
            lines.append(f"{_i(ind + 1)}@functools.wraps(fn)")
        lines += [f"{_i(ind + 1)}def wrapper_{n}(*args, **kw):", *self.maybe_probe(ind + 2, 0.5),
                  f"{_i(ind + 2)}return fn(*args, **kw)", f"{_i(ind + 1)}return wrapper_{n}",
                  f"{_i(ind)}@deco_{n}", f"{_i(ind)}def f_{n}(a):", *d,
                  f"{_i(ind + 1)}return {e}"]
        return lines, f"f_{n}({self.k()})"

    def f_recursion(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        if not self.deep_used and not ctx.get("hot") and self.r.random() < 0.04:
            self.deep_used, levels = True, self.r.randint(520, 640)  # past a 512-entry buffer
        else:
            levels = self.r.randint(0, 25)
        lines = [f"{_i(ind)}def rec_{n}(d, a):", f"{_i(ind + 1)}if d > 0:"]
        if self.r.random() < 0.3 and levels < 100:
            lines += [f"{_i(ind + 2)}if d % 7 == 0:", f"{_i(ind + 3)}PROBE()"]
        lines += [f"{_i(ind + 2)}return rec_{n}(d - 1, a)", *d, f"{_i(ind + 1)}return {e}"]
        return lines, f"rec_{n}({levels}, {self.k()})"

    # -- exceptions and with-blocks -----------------------------------------------------------
    def f_try_except(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        I1, I2, I3 = _i(ind + 1), _i(ind + 2), _i(ind + 3)
        lines = [f"{_i(ind)}def f_{n}(a):", *d, f"{I1}r = 0", f"{I1}try:",
                 f"{I2}raise ValueError(a)", f"{I1}except ValueError as exc_{n}:",
                 *self.maybe_probe(ind + 2)]
        if self.r.random() < 0.3:  # a second exception handled inside the first handler
            lines += [f"{I2}try:", f"{I3}raise KeyError(a)", f"{I2}except KeyError:",
                      f"{I3}r = {e}"]
        else:
            lines.append(f"{I2}r = {e}")
        lines += [f"{I1}finally:", *(self.maybe_probe(ind + 2) or [f"{I2}pass"]),
                  f"{I1}return r"]
        return lines, f"f_{n}({self.k()})"

    def f_try_finally(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        I1, I2, I3 = _i(ind + 1), _i(ind + 2), _i(ind + 3)
        lines = [f"{_i(ind)}def f_{n}(a):", *d, f"{I1}r = 0"]
        if self.r.random() < 0.5:  # finally runs while the exception propagates
            lines += [f"{I1}try:", f"{I2}try:", f"{I3}raise KeyError(a)", f"{I2}finally:",
                      f"{I3}r = {e}", f"{I1}except KeyError:",
                      *(self.maybe_probe(ind + 2) or [f"{I2}pass"])]
        else:
            lines += [f"{I1}try:", *self.maybe_probe(ind + 2), f"{I2}r = 1",
                      f"{I1}except ZeroDivisionError:", f"{I2}r = -1", f"{I1}else:",
                      *(self.maybe_probe(ind + 2) or [f"{I2}pass"]), f"{I1}finally:",
                      f"{I2}r = {e}"]
        lines.append(f"{I1}return r")
        return lines, f"f_{n}({self.k()})"

    def f_with_cm(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        raising = self.r.random() < 0.5  # __exit__ sees (and suppresses) an exception
        I1, I2 = _i(ind + 1), _i(ind + 2)
        lines = [f"{_i(ind)}class CM_{n}:", f"{I1}def __enter__(self):",
                 *self.maybe_probe(ind + 2), f"{I2}return self",
                 f"{I1}def __exit__(self, *exc):", *self.maybe_probe(ind + 2, 0.5),
                 f"{I2}return {raising}", f"{_i(ind)}def f_{n}(a):", *d, f"{I1}r = 0",
                 f"{I1}with CM_{n}() as cm_{n}:", f"{I2}r = {e}"]
        if raising:
            lines.append(f"{I2}raise ValueError(r)")
        lines.append(f"{I1}return r")
        return lines, f"f_{n}({self.k()})"

    def f_contextmanager(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        I1, I2 = _i(ind + 1), _i(ind + 2)
        lines = [f"{_i(ind)}@contextlib.contextmanager", f"{_i(ind)}def cm_{n}():",
                 *self.maybe_probe(ind + 1), f"{I1}yield 1", *self.maybe_probe(ind + 1, 0.5),
                 f"{_i(ind)}def f_{n}(a):", *d, f"{I1}with cm_{n}() as v_{n}:",
                 f"{I2}r = {e}", f"{I1}return r"]
        return lines, f"f_{n}({self.k()})"

    # -- exec / eval / f-strings / callbacks from C -------------------------------------------
    def f_exec(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.gen(depth + 1, 0, ctx)
        src = "\n".join([*d, f"_r = {e}", ""])
        fname = self.r.choice([f"<fake-exec-{n}>", f"/nonexistent/fake_exec_{n}.py"])
        lines = [f"{_i(ind)}def f_{n}(a):", f"{_i(ind + 1)}ns_{n} = dict(globals())",
                 f"{_i(ind + 1)}exec(compile({src!r}, {fname!r}, 'exec'), ns_{n})",
                 f"{_i(ind + 1)}return ns_{n}['_r']"]
        return lines, f"f_{n}({self.k()})"

    def f_eval(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        lines = [f"{_i(ind)}def f_{n}(a):", *d,
                 f"{_i(ind + 1)}return eval(compile({e!r}, '<fake-eval-{n}>', 'eval'), "
                 f"{{**globals(), **locals()}})"]
        return lines, f"f_{n}({self.k()})"

    def f_fstring(self, depth, ind, ctx):
        n = self.fresh()
        d, e = self.body(depth, ind + 1, ctx)
        I1 = _i(ind + 1)
        lines = [f"{_i(ind)}def f_{n}(a):", *d]
        if "\n" in e or '"' in e or "'" in e:
            lines.append(f"{I1}v_{n} = lambda: {e}")
            e = f"v_{n}()"
        if self.r.random() < 0.5:
            lines.append(f'{I1}s = f"{{a}}:{{ {e} !r:>4}}"')
        else:
            lines.append(f'{I1}s = f"""{{a}}{{\n{_i(ind + 2)}{e}\n{I1}}}"""')
        lines.append(f"{I1}return len(s)")
        return lines, f"f_{n}({self.k()})"

    def f_builtin_callback(self, depth, ind, ctx):
        self.fresh()
        d, e = self.body(depth, ind, ctx)
        expr = self.r.choice([
            f"len(sorted([1], key=lambda v: {e}))",
            f"list(map(lambda v: {e}, [1]))[0]",
            f"functools.reduce(lambda x, y: x + {e}, [1, 2])",
        ])
        return d, expr


    def f_hot_loop(self, depth, ind, ctx):
        """Runs the body HOT_ITERATIONS times with PROBE() silenced until the last: the probes
        then fire from specialized (adaptive) instructions, e.g. frames pushed inline by
        CALL_PY_EXACT_ARGS, BINARY_SUBSCR_GETITEM, LOAD_ATTR_PROPERTY or FOR_ITER_GEN."""
        n = self.fresh()
        d, e = self.body(depth, ind + 1, {**ctx, "hot": True})
        I1, I2 = _i(ind + 1), _i(ind + 2)
        lines = [f"{_i(ind)}def hot_{n}(a):", *d, f"{I1}for j_{n} in range({HOT_ITERATIONS}):",
                 f"{I2}_SILENT[0] += j_{n} == 0",
                 f"{I2}_SILENT[0] -= j_{n} == {HOT_ITERATIONS - 1}", f"{I2}r = {e}",
                 f"{I1}return r"]
        return lines, f"hot_{n}({self.k()})"


def generate(seed: int, features=None, max_depth=None) -> str:
    """The source of a program: prelude, then 2-4 independent probe chains."""
    g = _Gen(seed, features, max_depth)
    out = [PRELUDE]
    for chain in range(g.r.randint(2, 4)):
        d, e = g.gen(0, 0, {})
        out += d
        out += g.maybe_probe(0, 0.2)
        out.append(f"_result_{chain} = {e}")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print(generate(int(sys.argv[1]) if len(sys.argv) > 1 else 0, sys.argv[2:] or None), end="")
