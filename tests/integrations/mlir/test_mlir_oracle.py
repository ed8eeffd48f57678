"""Byte-identical: callsite's MLIR locations vs MLIR's own loc_tracebacks(), same stacks, same rules.

For every program and rule set, the op is built once under MLIR's ir.loc_tracebacks() and once
under callsite (auto_locations, the loc_tracebacks drop-in), from the same call site; the text
MLIR prints for each op's location and callsite's Traceback.to_mlir() must be equal; through
MLIR's C API and through the bindings' Python API (location_path).
"""
import sys

import pytest

import callsite
import callsite.mlir
import mlir_support as H

PROGRAM = '''
def leaf(ir, f, **kw):
    return H.make(ir, f, **kw)

def via_lambda(ir, f):
    g = lambda: H.make(ir, f)
    return g()

def via_comprehension(ir, f):
    return [H.make(ir, f) for _ in range(1)][0]

class Builder:
    def method(self, ir, f):
        def inner():
            return leaf(ir, f)
        return inner()

    @classmethod
    def cls_method(cls, ir, f):
        return cls().method(ir, f)

    @staticmethod
    def static(ir, f):
        return leaf(ir, f)

def multi_line(ir, f):
    return H.make(
        ir,
        f,
    )

def generator(ir, f):
    yield leaf(ir, f)

def recursive(ir, f, n):
    return recursive(ir, f, n - 1) if n else leaf(ir, f)

def nested(ir, f):
    def a():
        def b():
            return leaf(ir, f)
        return b()
    return a()

def explicit(ir, f, loc):
    return leaf(ir, f, loc=loc)
'''

SCENARIOS = {
    "function": lambda p, ir, f: p.leaf(ir, f),
    "lambda": lambda p, ir, f: p.via_lambda(ir, f),
    "comprehension": lambda p, ir, f: p.via_comprehension(ir, f),
    "method+closure": lambda p, ir, f: p.Builder().method(ir, f),
    "classmethod": lambda p, ir, f: p.Builder.cls_method(ir, f),
    "staticmethod": lambda p, ir, f: p.Builder.static(ir, f),
    "multi-line call": lambda p, ir, f: p.multi_line(ir, f),
    "generator": lambda p, ir, f: next(p.generator(ir, f)),
    "nested functions": lambda p, ir, f: p.nested(ir, f),
    "deep recursion": lambda p, ir, f: p.recursive(ir, f, 80),  # past the 64-frame buffer
}


@pytest.fixture(params=H.CANDIDATES)
def ir(request):
    return H.oracle_ir(request.param)


@pytest.fixture(params=["c_api", "python_api"], autouse=True)
def location_path(request):
    """Every test on both of callsite's paths: MLIR's C API where the bindings' library exports
    it (iree's), and the bindings' Python API, forced on the same bindings."""
    used = []
    for name in H.CANDIDATES:
        try:
            used.append(callsite.mlir.use(name))
        except ImportError:
            continue
    for b in used:
        b._use_python_api(request.param == "python_api")
    try:
        yield request.param
    finally:
        for b in used:
            b._use_python_api(False)


def run_all_ways(ir, fn, f, *, limit=10, mlir_kw=None, callsite_kw=None, current=None):
    """fn() under MLIR, callsite.auto_locations and callsite.mlir.loc_tracebacks, from one call site.
    Returns {way: (op location text, callsite Traceback.to_mlir())}."""
    mlir_kw = mlir_kw or {}
    callsite_kw = callsite_kw or {}
    f.limit = limit
    ways = {
        "mlir": lambda: ir.loc_tracebacks(max_depth=limit, **mlir_kw),
        "auto_locations": lambda: callsite.mlir.auto_locations(f, limit=limit, ir=ir, **callsite_kw),
        "drop-in": lambda: callsite.mlir.loc_tracebacks(max_depth=limit, ir=ir, **mlir_kw),
    }
    out = {}
    with H.context(ir):
        for name, scope in ways.items():
            if current is not None:
                with current(), scope():
                    out[name] = fn()
            else:
                with scope():
                    out[name] = fn()
    return out


def assert_identical(out, expect_frames=None):
    mlir_text, tb_text = out["mlir"]
    assert out["auto_locations"][0] == mlir_text
    assert out["drop-in"][0] == mlir_text
    assert tb_text == mlir_text and out["auto_locations"][1] == mlir_text
    if expect_frames is not None:
        n = mlir_text.count(" at ") + (0 if mlir_text == "loc(unknown)" else 1)
        assert n == expect_frames, mlir_text
    return mlir_text


@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_programs(ir, tmp_path, scenario):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    text = assert_identical(run_all_ways(ir, lambda: SCENARIOS[scenario](prog, ir, f), f))
    assert str(tmp_path / "prog.py") in text


def test_module_level(ir, tmp_path):
    path = tmp_path / "modlevel.py"
    path.write_text("result = H.make(ir, f)\n")
    code = compile(path.read_text(), str(path), "exec")
    f = H.support_filter()

    def run():
        ns = {"H": H, "ir": ir, "f": f}
        exec(code, ns)
        return ns["result"]

    text = assert_identical(run_all_ways(ir, run, f))
    assert f'"<module>"("{path}":1:' in text


@pytest.mark.parametrize("limit", [0, 1, 2, 10])
def test_frame_limits(ir, tmp_path, limit):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    out = run_all_ways(ir, lambda: prog.recursive(ir, f, 12), f, limit=limit)
    text = assert_identical(out, expect_frames=limit)
    if limit == 0:
        assert text == "loc(unknown)"
    if limit == 1:
        assert "callsite" not in text and text.startswith('loc("leaf"(') or sys.version_info < (3, 11)


def test_exclude_program_file(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    H.exclude_everywhere(ir, tmp_path / "prog.py", f)
    text = assert_identical(run_all_ways(ir, lambda: prog.nested(ir, f), f))
    assert "prog.py" not in text and __file__ in text


def test_nested_exclude_dir_include_file(ir, tmp_path):
    lib_dir = tmp_path / "lib"
    lib_dir.mkdir()
    helper = H.write_program(lib_dir, "helper", '''
        def call(fn):
            return fn()
    ''')
    user = H.write_program(lib_dir, "user", '''
        def build(helper, ir, f):
            return helper.call(lambda: H.make(ir, f))
    ''')
    f = H.support_filter()
    H.exclude_everywhere(ir, lib_dir, f)  # MLIR's rule is a prefix: the directory path
    H.include_everywhere(ir, lib_dir / "user.py", f)  # included: wins over the exclusion
    text = assert_identical(run_all_ways(ir, lambda: user.build(helper, ir, f), f))
    assert "user.py" in text and "helper.py" not in text
    assert '"build.<locals>.<lambda>"' in text or sys.version_info < (3, 11)


def test_limit_counts_kept_frames_past_excluded_ones(ir, tmp_path):
    lib = H.write_program(tmp_path, "lib", '''
        def relay(n, fn):
            return relay(n - 1, fn) if n else fn()
    ''')
    f = H.support_filter()
    H.exclude_everywhere(ir, tmp_path / "lib.py", f)
    text = assert_identical(
        run_all_ways(ir, lambda: lib.relay(20, lambda: H.make(ir, f)), f, limit=2),
        expect_frames=2)
    assert "lib.py" not in text


def test_use_traceback_replaces_explicit(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    explicit = lambda: ir.Location.name("explicit")  # noqa: E731
    out = run_all_ways(ir, lambda: prog.explicit(ir, f, explicit()), f,
                       mlir_kw={"on_explicit_actn": ir.OnExplicitAction.USE_TRACEBACK},
                       callsite_kw={"on_explicit": "use_traceback"})
    text = assert_identical(out)
    assert text != 'loc("explicit")' and text.startswith("loc(callsite(")


def test_explicit_wins_by_default(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    out = run_all_ways(ir, lambda: prog.explicit(ir, f, ir.Location.name("explicit")), f)
    assert {v[0] for v in out.values()} == {'loc("explicit")'}


@pytest.mark.parametrize("use_traceback", [False, True])
def test_nameloc_wrap(ir, tmp_path, use_traceback):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    current = lambda: ir.Location.name("outer", childLoc=ir.Location.name("inner"))  # noqa
    mlir_kw = {"current_loc_actn": ir.CurrentLocAction.NAMELOC_WRAP}
    callsite_kw = {"current_loc": "nameloc_wrap"}
    if use_traceback:
        mlir_kw["on_explicit_actn"] = ir.OnExplicitAction.USE_TRACEBACK
        callsite_kw["on_explicit"] = "use_traceback"
    for fn in (lambda: prog.nested(ir, f),
               lambda: prog.explicit(ir, f, ir.Location.name("explicit"))):
        out = run_all_ways(ir, fn, f, mlir_kw=mlir_kw, callsite_kw=callsite_kw, current=current)
        mlir_text = out["mlir"][0]
        assert mlir_text.startswith('loc("outer"("inner"(')
        assert out["auto_locations"][0] == mlir_text and out["drop-in"][0] == mlir_text


def test_fallback_ignores_current_location(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", PROGRAM)
    f = H.support_filter()
    out = run_all_ways(ir, lambda: prog.nested(ir, f), f,
                       current=lambda: ir.Location.name("ignored"))
    assert "ignored" not in assert_identical(out)


def test_opview_path(ir, tmp_path):
    """Through OpView.__init__ (as every generated op class builds), not Operation.create."""
    prog = H.write_program(tmp_path, "ov", '''
        def build(ir):
            return H.make_opview(ir)
    ''')
    f = H.support_filter()
    out = {}
    with H.context(ir):
        for name, scope in {"mlir": lambda: ir.loc_tracebacks(),
                            "callsite": lambda: callsite.mlir.auto_locations(f, ir=ir)}.items():
            with scope():
                out[name] = prog.build(ir)
    assert out["mlir"] == out["callsite"]
    assert str(tmp_path / "ov.py") in out["mlir"]


def test_dialect_ops(tmp_path):
    """Real dialect ops: arith through its hand-written arith.py (kept, as MLIR keeps it) and
    the generated _arith_ops_gen.py (excluded), scf.for with a body."""
    ir = H.import_ir("iree.compiler.ir")
    why = H.mlir_walk_refusal(ir)
    if why:
        pytest.skip(why)
    from iree.compiler.dialects import arith, scf
    prog = H.write_program(tmp_path, "dsl", '''
        def kernel(ir, arith, scf):
            i32 = ir.IntegerType.get_signless(32)
            index = ir.IndexType.get()
            c = arith.ConstantOp(i32, 7)
            lb, ub, step = (arith.constant(index, v) for v in (0, 8, 1))
            loop = scf.ForOp(lb, ub, step)
            with ir.InsertionPoint(loop.body):
                s = arith.addi(c.result, c.result)
                scf.YieldOp([])
            return [str(o.location) for o in (c, loop)] + [str(s.owner.location)]
    ''')
    out = {}
    with H.context(ir), ir.Location.unknown():  # block arguments need a Location.current
        for name, scope in {"mlir": lambda: ir.loc_tracebacks(),
                            "callsite": lambda: callsite.mlir.auto_locations(ir=ir)}.items():
            with scope():
                out[name] = prog.kernel(ir, arith, scf)
    assert out["mlir"] == out["callsite"]
    assert all("dsl.py" in t for t in out["mlir"])
    assert all("_ops_gen.py" not in t for t in out["mlir"])
