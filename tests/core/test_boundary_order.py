"""callsite.boundary beyond the plain nested `with`: a limit without a filter leaves room for the
kernel's frame; boundaries closed out of order (generators and coroutines suspended inside
their `with`) remove exactly themselves; a kernel rewritten by its DSL (parsed and compiled
again, or exec'd from generated text) is recognised by its origin. The oracle is the stack
CPython reports (frame.f_back), cut at the kernel's frame."""
import ast
import asyncio
import functools
import inspect
import linecache
import sys
import textwrap

import pytest

import callsite

def names(tb):
    return [f.name for f in tb]


def write_module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    namespace = {"__name__": name, "callsite": callsite, "sys": sys}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def oracle(kernel_codes):
    """CPython's frame names from the caller up, up to and including the first frame whose code
    is one of `kernel_codes`."""
    out = []
    frame = sys._getframe(1)
    while frame is not None:
        out.append(frame.f_code.co_name)
        if frame.f_code in kernel_codes:
            return out
        frame = frame.f_back
    return out


# --- the limit leaves room for the kernel ----------------------------------------------------

CHAIN = '''
    def c(how): return how()
    def b(how): return c(how)
    def a(how): return b(how)
    def kernel(how): return a(how)
    def framework(how, n): return kernel(how) if n == 0 else framework(how, n - 1)
    def deep(how, n):  # n frames between the capture and the kernel
        return how() if n == 0 else deep(how, n - 1)
    def deep_kernel(how, n): return deep(how, n)
    def deep_framework(how, n): return deep_kernel(how, n)
'''


@pytest.mark.parametrize("flt", [None, "Filter()"])
def test_a_limit_leaves_room_for_the_kernel_with_or_without_a_filter(tmp_path, callsite_backend, flt):
    ns = write_module(tmp_path, "chain", CHAIN)
    f = None if flt is None else callsite.Filter()
    with callsite.boundary(ns["kernel"]):
        for limit, expected in [(1, ["kernel"]), (2, ["c", "kernel"]),
                                (3, ["c", "b", "kernel"]), (4, ["c", "b", "a", "kernel"]),
                                (5, ["c", "b", "a", "kernel"]), (0, [])]:
            tb = ns["framework"](lambda: callsite.capture(1, limit, filter=f), 30)
            assert names(tb) == expected, limit
        whole = ns["framework"](lambda: callsite.capture(1, filter=f), 30)
        assert names(whole) == ["c", "b", "a", "kernel"]
    # A filter applied to the limited capture later still knows its last frame is the kernel.
    with callsite.boundary(ns["kernel"]):
        tb = ns["framework"](lambda: callsite.capture(1, 2, filter=f), 3)
    assert names(callsite.Filter(exclude=["chain"]).apply(tb)) == ["kernel"]


@pytest.mark.parametrize("flt", [None, "Filter()"])
def test_a_limit_leaves_room_for_a_kernel_deeper_than_the_first_prefix(tmp_path, callsite_backend, flt):
    ns = write_module(tmp_path, "deepchain", CHAIN)
    f = None if flt is None else callsite.Filter()
    with callsite.boundary(ns["deep_kernel"]):
        tb = ns["deep_framework"](lambda: callsite.capture(1, 3, filter=f), 40)
    assert names(tb) == ["deep", "deep", "deep_kernel"]
    # Without a boundary the same query is the innermost frames, as before.
    tb = ns["deep_framework"](lambda: callsite.capture(1, 3, filter=f), 40)
    assert names(tb) == ["deep", "deep", "deep"]


def test_first_user_frame_counts_the_kernel_as_kept(tmp_path, callsite_backend):
    ns = write_module(tmp_path, "first", CHAIN)
    everything_out = callsite.Filter(exclude=["first"])
    with callsite.boundary(ns["deep_kernel"]):
        frame = ns["deep_framework"](lambda: everything_out.first_user_frame(1), 40)
    assert frame.name == "deep_kernel"
    # Without the boundary: the first frame outside the excluded file (this test's).
    frame = ns["deep_framework"](lambda: everything_out.first_user_frame(1), 40)
    assert frame.name == "test_first_user_frame_counts_the_kernel_as_kept"


def test_an_enclosing_kernel_found_once_the_walk_is_complete_counts_as_kept(tmp_path, callsite_backend):
    """The innermost boundary's kernel is not running, so an enclosing one's cuts the chain: it
    is found only once the walk of the whole stack is complete, among frames a shorter prefix
    had already scanned (and its filter had dropped)."""
    ns = write_module(tmp_path, "enclosing", CHAIN + "    def unrelated(): pass\n")
    everything_out = callsite.Filter(exclude=["enclosing"])
    with callsite.boundary(ns["deep_kernel"]), callsite.boundary(ns["unrelated"]):
        frame = ns["deep_framework"](lambda: everything_out.first_user_frame(1), 30)
        tb = ns["deep_framework"](lambda: callsite.capture(1, 2, filter=everything_out), 30)
        plain = ns["deep_framework"](lambda: callsite.capture(1, 3), 30)
    assert frame.name == "deep_kernel"
    assert names(tb) == ["deep_kernel"]
    assert names(plain) == ["deep", "deep", "deep_kernel"]


# --- closing out of order --------------------------------------------------------------------

def k1():
    return callsite.capture()


def k2():
    return callsite.capture()


def via(kernel):
    return kernel()


def bounded_gen(kernel):
    with callsite.boundary(kernel) as b:
        yield b


def test_generators_closed_in_opening_order_remove_exactly_their_boundary(callsite_backend):
    g1, g2 = bounded_gen(k1), bounded_gen(k2)
    b1, b2 = next(g1), next(g2)
    assert names(via(k1)) == ["k1"] and names(via(k2)) == ["k2"]
    g1.close()  # not the innermost: only b1 goes
    assert not b1.open and b2.open
    assert len(via(k1)) > 2             # b1's kernel no longer cuts
    assert names(via(k2)) == ["k2"]     # b2 is still in force
    g2.close()
    assert not b2.open
    assert len(via(k1)) > 2 and len(via(k2)) > 2
    # Nothing is left open: a third boundary nests and closes as usual.
    with callsite.boundary(k1):
        assert names(via(k1)) == ["k1"]
    assert len(via(k1)) > 2


def test_the_middle_of_three_closes_alone(callsite_backend):
    gens = [bounded_gen(k) for k in (k1, k2, via)]
    for g in gens:
        next(g)
    gens[1].close()
    # via (innermost) and k1 (outermost) remain: via is on every stack below and wins.
    assert names(via(k2)) == ["k2", "via"]
    gens[2].close()
    assert names(via(k2))[-1] != "k1" and len(via(k2)) > 2
    assert names(via(k1)) == ["k1"]
    gens[0].close()
    assert len(via(k1)) > 2


def test_coroutines_suspended_inside_boundaries_finish_out_of_order():
    async def kernel_a():
        return names(callsite.capture())

    async def kernel_b():
        return names(callsite.capture())

    async def inside(kernel, entered, release):
        with callsite.boundary(kernel):
            entered.set()
            await release.wait()
            return await kernel()

    async def main():
        ea, eb, ra, rb = (asyncio.Event() for _ in range(4))
        # Two tasks: each has its own context, so each sees only its own boundary.
        ta = asyncio.ensure_future(inside(kernel_a, ea, ra))
        tb = asyncio.ensure_future(inside(kernel_b, eb, rb))
        await ea.wait()
        await eb.wait()
        ra.set()
        a = await ta
        rb.set()
        b = await tb
        return a, b, names(callsite.capture())

    a, b, outside = asyncio.run(main())
    assert a == ["kernel_a"] and b == ["kernel_b"]
    assert "kernel_a" not in outside and "kernel_b" not in outside


def test_closing_in_another_context_is_an_error():
    import contextvars
    b = callsite.boundary(k1)
    ctx = contextvars.copy_context()
    b.__enter__()
    try:
        with pytest.raises(RuntimeError, match="not open in the calling context"):
            ctx.run(b.__exit__, None, None, None)
        assert b.open
    finally:
        b.__exit__(None, None, None)
    assert not b.open and len(via(k1)) > 2


# --- kernels rewritten by their DSL ------------------------------------------------------------

DSL = '''
import ast
import functools
import inspect
import textwrap

class Double(ast.NodeTransformer):
    """The DSL's rewrite: every call of `op(x)` becomes `op(x * 2)`."""
    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "op":
            node.args = [ast.BinOp(a, ast.Mult(), ast.Constant(2)) for a in node.args]
        return node

def rewrite(fn, source=None):
    """Parses fn's source, transforms it and compiles a new function, keeping fn's file name and
    line numbers (and dropping the decorator), as DSLs do."""
    source = textwrap.dedent(source if source is not None else inspect.getsource(fn))
    tree = ast.parse(source)
    tree.body[0].decorator_list = []
    tree = ast.fix_missing_locations(Double().visit(tree))
    first = fn.__code__.co_firstlineno
    ast.increment_lineno(tree, first - 1)
    code = compile(tree, fn.__code__.co_filename, "exec")
    namespace = {}
    exec(code, fn.__globals__, namespace)
    return namespace[fn.__name__]

class JitKernel:
    """What `@jit` returns: the kernel as written (through __wrapped__, as functools.wraps
    would set it) and, once called, its rewritten code."""
    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.compiled = None
    def __call__(self, *args):
        if self.compiled is None:
            self.compiled = rewrite(self.__wrapped__)
        return self.compiled(*args)

def jit(fn):
    return JitKernel(fn)
'''

USER = '''
from dsl import jit

def op(x):
    return capture_here(x)

@jit
def kernel(x):
    def helper():
        return op(x)
    return helper()

def unrelated_kernel(x):
    return op(x)

def framework(x, n):
    return kernel(x) if n == 0 else framework(x, n - 1)
'''


@pytest.fixture
def dsl_program(tmp_path, monkeypatch):
    (tmp_path / "dsl.py").write_text(DSL)
    (tmp_path / "user_kernels.py").write_text(USER)
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop("dsl", None)
    sys.modules.pop("user_kernels", None)
    import user_kernels
    yield user_kernels
    sys.modules.pop("dsl", None)
    sys.modules.pop("user_kernels", None)


def captured(module, how):
    """Installs capture_here; `how` runs two frames below op (capture_here's lambda, its own)."""
    seen = []
    module.capture_here = lambda x: seen.append((x, how())) or x
    return seen


def test_a_kernel_rewritten_with_ast_and_compile_is_the_boundary(dsl_program, callsite_backend):
    seen = captured(dsl_program, lambda: callsite.capture(2))
    with callsite.boundary(dsl_program.kernel):   # the kernel as written
        assert dsl_program.framework(5, 60) == 10  # the rewritten code ran
        dsl_program.framework(6, 0)
    rewritten = dsl_program.kernel.compiled.__code__
    assert rewritten is not dsl_program.kernel.__wrapped__.__code__
    for _, tb in seen:
        assert names(tb) == ["op", "helper", "kernel"]
        assert tb[-1].code is rewritten
    # The oracle: CPython's own frames, cut at the rewritten kernel's.
    seen.clear()
    dsl_program.capture_here = lambda x: seen.append(oracle({rewritten})) or x
    dsl_program.framework(1, 60)
    assert seen[0][1:] == ["op", "helper", "kernel"]
    # Outside the boundary the whole stack again.
    seen = captured(dsl_program, lambda: callsite.capture(2))
    dsl_program.framework(1, 60)
    assert names(seen[0][1]).count("framework") == 61


def test_the_rewritten_kernel_and_filters_limits_first_user_frame(dsl_program, callsite_backend):
    everything_out = callsite.Filter(exclude=["user_kernels", "dsl", "test_boundary_order"])
    seen = captured(dsl_program, lambda: (callsite.capture(2, filter=everything_out),
                                          callsite.capture(2, 2),
                                          everything_out.first_user_frame(2)))
    with callsite.boundary(dsl_program.kernel):
        dsl_program.framework(1, 40)
        dsl_program.framework(1, 40)  # the second walk stops at the learned code
    for _, (filtered, limited, first) in seen:
        assert names(filtered) == ["kernel"]
        assert names(limited) == ["op", "kernel"]
        assert first.name == "kernel"


def test_the_rewritten_kernel_in_auto_locations_boundary(dsl_program):
    """auto_locations(boundary=) opens the same boundary: MLIR's locations end at the rewritten
    kernel too (the oracle: the location's text names no frame below it)."""
    ir = pytest.importorskip("iree.compiler.ir")
    arith = pytest.importorskip("iree.compiler.dialects.arith")
    import callsite.mlir
    locations = []
    with ir.Context(), ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            i32 = ir.IntegerType.get_signless(32)
            dsl_program.capture_here = (
                lambda x: locations.append(str(arith.ConstantOp(i32, 1).location)) or x)
            with callsite.mlir.auto_locations(boundary=dsl_program.kernel, limit=None):
                dsl_program.framework(1, 30)
            with callsite.mlir.auto_locations(limit=None):  # no boundary: the whole stack
                dsl_program.framework(1, 30)
    inside, outside = locations
    assert '"kernel"' in inside and '"op"' in inside
    assert '"framework"(' not in inside and '<lambda>"(' in inside
    assert '"framework"(' in outside


def test_a_kernel_defined_by_exec_and_rewritten_by_exec(callsite_backend):
    source = textwrap.dedent('''
        def op(x):
            return capture_here(x)

        def kernel(x):
            y = x + 1
            return op(y)

        def framework(x, n):
            return run(x) if n == 0 else framework(x, n - 1)
    ''')
    filename = "<generated kernels 1>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        ns = {}
        exec(compile(source, filename, "exec"), ns)
        seen = []
        ns["capture_here"] = lambda x: seen.append(callsite.capture(1)) or x  # skips the lambda
        # The DSL builds the new kernel from generated text, exec'd under the same file name with
        # the kernel's lines (padding lines keep the numbering).
        start = ns["kernel"].__code__.co_firstlineno
        kernel_text = "".join(source.splitlines(True)[start - 1:start + 2])
        generated = "\n" * (start - 1) + kernel_text.replace("x + 1", "x + 100")
        rewritten_ns = {"op": ns["op"]}
        exec(compile(generated, filename, "exec"), rewritten_ns)
        ns["run"] = rewritten_ns["kernel"]
        with callsite.boundary(ns["kernel"]):
            ns["framework"](1, 50)
        assert names(seen[0]) == ["op", "kernel"]
        assert seen[0][-1].code is rewritten_ns["kernel"].__code__
        assert seen[0][-1].lineno == start + 2
    finally:
        del linecache.cache[filename]


def test_a_function_of_the_same_name_elsewhere_is_not_the_kernel(tmp_path, callsite_backend):
    one = write_module(tmp_path, "one", '''
        def kernel(): return callsite.capture()
        def framework(n): return kernel() if n == 0 else framework(n - 1)
    ''')
    two = write_module(tmp_path, "two", '''
        def pad(): pass

        def kernel(): return callsite.capture()
    ''')
    # Same name, another file; same file, lines outside the kernel's: neither is it.
    with callsite.boundary(two["kernel"]):
        assert names(one["framework"](10)).count("framework") == 11
    three = write_module(tmp_path, "three", '''
        def kernel(): return callsite.capture()

        def later(): return kernel2()
        def kernel2(): return callsite.capture()
    ''')
    # kernel2 renamed "kernel": same file and name, but it starts after the kernel's last line.
    renamed = three["kernel2"].__code__.replace(co_name="kernel")
    with callsite.boundary(three["kernel"]):
        tb = eval(renamed, three)
    assert tb[0].name == "kernel" and len(tb) > 2
