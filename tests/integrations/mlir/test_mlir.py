"""callsite.mlir: locations checked against CPython's own frames, contexts and caches, reference
counts, thread/task scoping, nesting, wrappers, explicit location(), bad input."""
import asyncio
import contextlib
import gc
import subprocess
import sys
import textwrap
import threading
import weakref

import pytest

import callsite
import callsite.mlir
import mlir_support as H
from hardening_support import assert_clean, run_python


@pytest.fixture(params=H.CANDIDATES)
def ir(request):
    return H.import_ir(request.param)


def expected_location(ir, frames):
    """The location MLIR's tracebackToLocation builds for `frames` (innermost first, as
    (filename, co_name, co_qualname, lineno, colno, end_lineno, end_colno) from CPython's own
    frame objects and co_positions()), built with the bindings' Python API."""
    locs = []
    for filename, name, qualname, line, col, end_line, end_col in frames:
        if sys.version_info >= (3, 11):
            file_loc = ir.Location.file(filename, line, -1 if col is None else col,
                                        end_line, -1 if end_col is None else end_col)
            locs.append(ir.Location.name(qualname, childLoc=file_loc))
        else:
            locs.append(ir.Location.name(name, childLoc=ir.Location.file(filename, line, 0)))
    if not locs:
        return str(ir.Location.unknown())
    if len(locs) == 1:
        return str(locs[0])
    return str(ir.Location.callsite(locs[0], locs[1:]))


@pytest.mark.parametrize("limit", [0, 1, 3, 10])
def test_locations_match_cpython_frames(ir, tmp_path, limit):
    """On every Python version and bindings build (also where MLIR's own walk records no
    frames): an op's location, and callsite.mlir.location(), equal the location built with the
    bindings' API from CPython's own frame objects and co_positions()."""
    prog = H.write_program(tmp_path, "prog", '''
        def build(ir, f):
            def inner():
                return H.make_with_frame(ir, f)
            return inner()
    ''')
    f = H.support_filter()
    f.limit = limit
    with H.context(ir), callsite.mlir.auto_locations(f, ir=ir):
        auto, explicit, frames = prog.build(ir, f)
        want = expected_location(ir, frames)
    assert auto == explicit == want
    if limit:
        assert str(tmp_path / "prog.py") in want
    else:
        assert want == "loc(unknown)"


@pytest.mark.parametrize("name,filename", [
    ('q"uote', 'dir "x"/a.py'),
    ("back\\slash", "C:\\path\\b.py"),
    ("new\nline", "tab\there.py"),
    ("ünï", "/tmp/ü/日本.py"),
    ("<lambda>", "<string>"),
])
def test_text_escaping_matches_mlir_printer(ir, name, filename):
    code = compile("def f():\n    return __import__('callsite').capture()\n", filename, "exec")
    ns = {}
    exec(code, ns)
    fn = ns["f"]
    fn.__code__ = fn.__code__.replace(co_name=name, **(
        {"co_qualname": name} if sys.version_info >= (3, 11) else {}))
    tb = fn()[:1]
    fr = tb[0]
    frames = [(fr.filename, fr.name, fr.qualname, fr.lineno, fr.colno, fr.end_lineno,
               fr.end_colno)]
    with H.context(ir):
        want = expected_location(ir, frames)
    assert tb.to_mlir() == want
    assert "loc(" + fr.to_mlir() + ")" == want


def test_whole_traceback_text_matches_mlir_printer(ir):
    def a():
        return b()

    def b():
        return callsite.capture()

    tb = a()
    frames = [(f.filename, f.name, f.qualname, f.lineno, f.colno, f.end_lineno, f.end_colno)
              for f in tb]
    with H.context(ir):
        assert tb.to_mlir() == expected_location(ir, frames)
        assert tb[:1].to_mlir() == expected_location(ir, frames[:1])
        assert tb[:0].to_mlir() == "loc(unknown)"


def test_to_mlir_arguments():
    tb = callsite.capture()
    f = callsite.Filter(exclude=["."], default_exclusions=False)
    assert tb.to_mlir(f) == tb.to_mlir(filter=f) == "loc(unknown)"
    assert tb.to_mlir(None) == tb.to_mlir()
    with pytest.raises(TypeError, match="filter must be a callsite.Filter"):
        tb.to_mlir(3)
    with pytest.raises(TypeError, match="unexpected keyword"):
        tb.to_mlir(filt=f)
    with pytest.raises(TypeError, match="at most 1"):
        tb.to_mlir(f, f)


def test_missing_columns_match_mlir(tmp_path):
    """-X no_debug_ranges: no columns; MLIR receives -1 and prints it unsigned."""
    if sys.version_info < (3, 11):
        pytest.skip("3.10 has no column table")
    ir = H.import_ir("iree.compiler.ir")
    script = tmp_path / "nocols.py"
    script.write_text(textwrap.dedent('''
        import callsite, callsite.mlir
        from iree.compiler import ir
        def build():
            return ir.Operation.create("test.op")
        with ir.Context() as ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            m = ir.Module.create()
            with ir.InsertionPoint(m.body):
                for scope in (ir.loc_tracebacks, callsite.mlir.auto_locations):
                    with scope():
                        print(build().location)
                print(callsite.capture().to_mlir())
    '''))
    out = subprocess.run([sys.executable, "-X", "no_debug_ranges", str(script)],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    assert ":4294967295" in out[1] and ":4294967295" in out[2]
    if H.mlir_walk_refusal(ir) is None:
        assert out[0] == out[1]


def test_two_contexts_never_mixed(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", '''
        def build(ir):
            return ir.Operation.create("test.op")
    ''')
    ops, ctxs = {}, {}
    with callsite.mlir.auto_locations(ir=ir), H.context(ir):
        for key in ("a1", "b", "a2"):  # one call site, three builds, the middle one in b
            with H.context(ir) if key == "b" else contextlib.nullcontext():
                ops[key], ctxs[key] = prog.build(ir), ir.Context.current
        a, b = ctxs["a1"], ctxs["b"]
        assert ctxs["a2"] == a and a != b
        assert [ops[k].location.context for k in ("a1", "b", "a2")] == [a, b, a]
        assert str(ops["a1"].location) == str(ops["a2"].location) == str(ops["b"].location)
        info_a, info_b = callsite.mlir.cache_info(a), callsite.mlir.cache_info(b)
        assert (info_a["hits"], info_a["misses"]) == (1, 1)
        assert (info_b["hits"], info_b["misses"]) == (0, 1)


def test_deleting_a_context_frees_its_cache(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", '''
        def build(ir):
            return ir.Operation.create("test.op")
    ''')
    gc.collect()
    before = callsite._callsite.mlir.cache_count()
    with callsite.mlir.auto_locations(ir=ir):
        with H.context(ir) as ctx:
            for _ in range(3):
                prog.build(ir).erase()
            assert callsite.mlir.cache_info(ctx)["entries"] > 0
        alive = weakref.ref(ctx)
        del ctx
        gc.collect()
        assert alive() is None  # the cached locations did not keep the context alive
        assert callsite._callsite.mlir.cache_count() == before


def test_code_refcounts_unchanged_after_10k_ops(ir, tmp_path):
    prog = H.write_program(tmp_path, "prog", '''
        def build(ir):
            return ir.Operation.create("test.op")
        def loop(ir, n):
            for _ in range(n):
                build(ir).erase()
    ''')
    codes = [prog.build.__code__, prog.loop.__code__, sys._getframe().f_code]
    gc.collect()
    before = [sys.getrefcount(c) for c in codes]
    with callsite.mlir.auto_locations(ir=ir):
        with H.context(ir) as ctx:
            counts = []
            for n in (10, 10_000):  # one call site: the second run only hits the caches
                prog.loop(ir, n)
                counts.append([sys.getrefcount(c) for c in codes])
            assert counts[0] == counts[1]  # bounded by call sites, no per-op growth
        del ctx
    gc.collect()
    assert [sys.getrefcount(c) for c in codes] == before


def test_threads_have_their_own_settings(ir, tmp_path):
    a_lib = H.write_program(tmp_path, "a_lib", "def call(fn):\n    return fn()\n")
    b_lib = H.write_program(tmp_path, "b_lib", "def call(fn):\n    return fn()\n")
    results, errors = {}, []
    barrier = threading.Barrier(2)

    def worker(name, exclude):
        try:
            f = H.support_filter()
            f.exclude_file(exclude)
            with callsite.mlir.auto_locations(f, ir=ir), H.context(ir):
                barrier.wait()
                texts = set()
                for _ in range(200):
                    for lib in (a_lib, b_lib):
                        texts.add(str(lib.call(lambda: ir.Operation.create("test.op")).location))
                results[name] = texts
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker, args=("a", str(tmp_path / "a_lib.py"))),
               threading.Thread(target=worker, args=("b", str(tmp_path / "b_lib.py")))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert all("a_lib.py" not in t for t in results["a"])
    assert any("b_lib.py" in t for t in results["a"])
    assert all("b_lib.py" not in t for t in results["b"])
    assert any("a_lib.py" in t for t in results["b"])


def test_thread_without_scope_is_untouched(ir):
    out = {}
    started, done = threading.Event(), threading.Event()

    def other():
        with H.context(ir), ir.Location.name("plain"):
            started.wait()
            out["loc"] = str(ir.Operation.create("test.op").location)
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with callsite.mlir.auto_locations(ir=ir):  # wrappers installed process-wide, settings here
        started.set()
        done.wait()
    t.join()
    assert out["loc"] == 'loc("plain")'


def test_asyncio_tasks_are_scoped(ir):
    def build(name):
        with H.context(ir), ir.Location.name(name):
            return str(ir.Operation.create("test.op").location)

    async def task(name, on):
        if on:
            with callsite.mlir.auto_locations(ir=ir):
                await asyncio.sleep(0)  # the other task runs while this scope is open
                return build(name)
        await asyncio.sleep(0)
        return build(name)

    async def main():
        return await asyncio.gather(task("on", True), task("off", False))

    on, off = asyncio.run(main())
    assert on.startswith("loc(callsite(") and off == 'loc("off")'


def test_nesting_and_restoring_the_builders(ir, tmp_path):
    original = [ir.OpView.__dict__["__init__"], ir.Operation.__dict__["create"]]
    lib = H.write_program(tmp_path, "lib", "def call(fn):\n    return fn()\n")
    inner_filter = H.support_filter()
    inner_filter.exclude_file(str(tmp_path / "lib.py"))
    build = lambda: str(lib.call(lambda: ir.Operation.create("test.op")).location)  # noqa
    with H.context(ir), ir.Location.name("default"):
        assert build() == 'loc("default")'
        outer_filter = H.support_filter()
        outer_filter.limit = 2  # the lambda and lib.call: the same whichever line calls build()
        with callsite.mlir.auto_locations(outer_filter, ir=ir):
            outer = build()
            with callsite.mlir.auto_locations(inner_filter, ir=ir, limit=1):
                inner = build()
            assert build() == outer
        assert build() == 'loc("default")'
    assert "lib.py" in outer and "lib.py" not in inner and " at " not in inner
    assert [ir.OpView.__dict__["__init__"], ir.Operation.__dict__["create"]] == original
    assert not callsite.mlir.use(ir).installed


def test_scope_restored_after_exception(ir):
    original = ir.Operation.__dict__["create"]
    with pytest.raises(ZeroDivisionError):
        with callsite.mlir.auto_locations(ir=ir):
            1 / 0
    assert ir.Operation.__dict__["create"] is original
    assert callsite._callsite.mlir.settings.get(None) is None


def test_opview_wrapping_an_existing_operation(ir):
    with H.context(ir), callsite.mlir.auto_locations(ir=ir):
        op = ir.Operation.create("test.op")
        view = ir.OpView(op)  # the other __init__ overload: must pass through untouched
        assert view.operation == op


def test_generated_op_classes_get_locations(tmp_path):
    ir = H.import_ir("iree.compiler.ir")
    from iree.compiler.dialects import arith
    with H.context(ir), callsite.mlir.auto_locations(ir=ir):
        c = arith.ConstantOp(ir.IntegerType.get_signless(32), 3)
        s = arith.addi(c.result, c.result)
    assert __file__ in str(c.location) and __file__ in str(s.owner.location)
    assert "_ops_gen.py" not in str(c.location)


def test_rule_change_changes_the_cached_location(ir, tmp_path):
    lib = H.write_program(tmp_path, "lib", "def call(fn):\n    return fn()\n")
    f = H.support_filter()
    with H.context(ir) as ctx, callsite.mlir.auto_locations(f, ir=ir):
        texts = []
        for step in range(3):
            if step == 1:
                f.exclude_file(str(tmp_path / "lib.py"))
            texts.append(str(lib.call(lambda: ir.Operation.create("test.op")).location))
        info = callsite.mlir.cache_info(ctx)
    assert "lib.py" in texts[0] and "lib.py" not in texts[1] and texts[1] == texts[2]
    assert info["misses"] == 2 and info["hits"] == 1


def test_location_function(ir):
    with H.context(ir) as ctx:
        loc = callsite.mlir.location()
        assert loc.context == ctx and __file__ in str(loc)
        skipped = callsite.mlir.location(skip=1)
        assert str(skipped) != str(loc) and __file__ not in str(skipped).split(" at ")[0]
        op = ir.Operation.create("test.op", loc=callsite.mlir.location())
        assert __file__ in str(op.location)
    with H.context(ir) as other:
        pass
    assert callsite.mlir.location(context=other).context == other


def test_location_function_errors(ir):
    with pytest.raises(ValueError, match="no current MLIR context"):
        callsite.mlir.location()
    with pytest.raises(TypeError, match="context must be an ir.Context"):
        callsite.mlir.location(context=object())
    with H.context(ir):
        with pytest.raises(TypeError, match="source must be a callsite.Filter, a callsite.Trace"):
            callsite.mlir.location("x")
        with pytest.raises(TypeError, match="filter must be a callsite.Filter or None, not str"):
            callsite.mlir.location(filter="x")
        with pytest.raises(ValueError, match="skip must be >= 0"):
            callsite.mlir.location(skip=-1)
        with pytest.raises(TypeError, match="unexpected keyword"):
            callsite.mlir.location(bogus=1)


def test_location_of_a_context_whose_bindings_are_not_detected_yet(ir):
    """context= names its bindings: the first call finds them, as a call without context=
    does (no callsite.mlir.bindings() or use() first)."""
    proc = run_python(f'''
        import callsite, callsite.mlir
        import {ir.__name__} as ir
        ctx = ir.Context()
        first = str(callsite.mlir.location(context=ctx))
        print(first.startswith('loc("<module>"(') and "<string>" in first)
        try:
            callsite.mlir.location(context=object())
        except TypeError as e:
            print("context must be an ir.Context" in str(e))
    ''')
    assert_clean(proc, "True\nTrue\n")


def test_location_finds_the_current_context_of_bindings_imported_later():
    """Bindings registered already, then another distribution imported: location() without
    context= finds that one's current context too."""
    if len(H.CANDIDATES) < 2:
        pytest.skip("needs two distributions of the bindings")
    first, second = H.CANDIDATES[:2]
    proc = run_python(f'''
        import callsite, callsite.mlir
        import {first} as first
        callsite.mlir.bindings()
        import {second} as second
        with second.Context() as ctx:
            print(callsite.mlir.location().context == ctx)
    ''')
    assert_clean(proc, "True\n")


def test_native_frame_with_only_a_line_is_what_the_bindings_build(ir):
    """A reifier that knows only the line: the location the bindings' own
    Location.file(name, line, 0) gives (MLIR's own choice where it has only a line), not
    MLIR's unsigned -1 for the columns and end."""
    from callsite import native

    exe = native.Executable("jit", lambda state: native.Location("dsl.py", state))
    cols = native.Executable("jit2", lambda state: native.Location("dsl.py", state, colno=3))
    ends = native.Executable("jit3", lambda state: native.Location("dsl.py", 4, end_lineno=6))
    # 3.10: every frame is FileLineColLoc(file, line, 0), as MLIR builds them there.
    col = 3 if sys.version_info >= (3, 11) else 0
    with H.context(ir):
        expected = [str(ir.Location.name("jit", childLoc=ir.Location.file("dsl.py", 7, 0))),
                    str(ir.Location.name("jit2", childLoc=ir.Location.file("dsl.py", 8, col)))]
        seen = []
        for e, state in ((exe, 7), (cols, 8)):
            with e.frame(state):
                seen.append(str(callsite.mlir.location(limit=1)))
        assert seen == expected
        assert "4294967295" not in seen[0]
        with ends.frame(1):
            span = ':4:0 to 6:0' if col else '"dsl.py":4:0)'
            assert span in str(callsite.mlir.location(limit=1))
        for e in (exe, cols, ends):  # Traceback.to_mlir() prints the same text
            with e.frame(7):
                tb = callsite.capture()
            assert tb.to_mlir() == str(callsite.mlir.location(tb, limit=len(tb)))


def test_one_auto_locations_object_is_one_scope(ir):
    scope = callsite.mlir.auto_locations(ir=ir)
    with scope as settings:
        with pytest.raises(RuntimeError, match="already entered.*call it again"):
            with scope:
                pass
        assert callsite.mlir._m.settings.get(None) is settings  # the open scope is intact
        assert callsite.mlir.use(ir).installed
    assert callsite.mlir._m.settings.get(None) is None
    with pytest.raises(RuntimeError, match="already entered"):
        scope.__enter__()
    assert not callsite.mlir.use(ir).installed
    with callsite.mlir.auto_locations(ir=ir) as a, callsite.mlir.auto_locations(ir=ir) as b:
        assert callsite.mlir._m.settings.get(None) is b and a is not b


def test_auto_locations_errors(ir):
    with pytest.raises(ValueError, match="on_explicit must be one of"):
        with callsite.mlir.auto_locations(on_explicit="sometimes", ir=ir):
            pass
    with pytest.raises(ValueError, match="current_loc must be one of"):
        with callsite.mlir.auto_locations(current_loc="wrap", ir=ir):
            pass
    with pytest.raises(TypeError, match="filter must be a callsite.Filter"):
        with callsite.mlir.auto_locations(filter="x", ir=ir):
            pass
    with pytest.raises(ValueError, match="limit must be >= 0"):
        with callsite.mlir.auto_locations(limit=-2, ir=ir):
            pass
    with pytest.raises(TypeError, match="not MLIR Python bindings"):
        callsite.mlir.use(sys)
    assert not callsite.mlir.use(ir).installed


def test_loc_tracebacks_drop_in_signature(ir):
    """MLIR's enum values and its argument names are accepted; max_depth is clamped."""
    if not hasattr(ir, "OnExplicitAction"):
        pytest.skip("bindings without loc_tracebacks actions")
    with callsite.mlir.loc_tracebacks(on_explicit_actn=ir.OnExplicitAction.USE_TRACEBACK,
                                   current_loc_actn=ir.CurrentLocAction.NAMELOC_WRAP,
                                   max_depth=10_000, ir=ir) as settings:
        assert settings.use_traceback and settings.nameloc_wrap and settings.limit == 512
        with callsite.mlir.loc_tracebacks(ir=ir) as inner:
            assert inner.limit == 512 and not inner.use_traceback  # MLIR: defaults, not inherited
    with callsite.mlir.loc_tracebacks(ir=ir) as settings:
        assert settings.limit == callsite.Filter.default().limit


@pytest.mark.parametrize("name", H.ALL_CANDIDATES)
def test_missing_bindings_are_reported(name):
    H.import_ir(name)  # skips, with the reason, where that distribution is not installed


def test_bindings_detection():
    found = callsite.mlir.bindings()
    assert found and all(isinstance(b, callsite.mlir.MlirBindings) for b in found)
    assert callsite.mlir.use(found[0].ir) is found[0]
    assert callsite.mlir.use(found[0].ir.__name__) is found[0]


def test_native_states_that_never_repeat_keep_the_cache_bounded(ir):
    """A JIT's states may never repeat: per-frame locations of a context start over past a
    bound instead of growing without end, and locations stay right across the restart."""
    from callsite import native

    exe = native.Executable("jit", lambda s: native.Location("jit.dsl", s + 1))
    n = 70_000
    with H.context(ir) as ctx:
        frame = exe.frame(0)
        seen = []
        with frame:
            for state in range(n):
                frame.state = state
                loc = callsite.mlir.location()
                if state in (0, n // 2, n - 1):
                    seen.append(str(loc))
                    assert f'"jit.dsl":{state + 1}:' in seen[-1], seen[-1]
            peak = callsite.mlir.cache_info(ctx)["frames"]
        assert peak <= 2**16
        with frame:
            frame.state = 0  # released by the restart: built again, the same
            again = str(callsite.mlir.location())
        assert f'"jit.dsl":1:' in again


def test_every_mlir_type_is_importable_under_its_name():
    """Each Python type of the MLIR subsystem names its import path (module.qualname)."""
    import importlib

    for t in (callsite.mlir.MlirSettings, callsite.mlir.MlirBindings,
              callsite.mlir._MethodInjector, callsite.mlir._FunctionInjector):
        module, _, name = f"{t.__module__}.{t.__qualname__}".rpartition(".")
        assert getattr(importlib.import_module(module), name) is t, t


def test_process_knobs_have_one_owner():
    """callsite.mlir's knob functions are a facade over callsite.mlir._state.KNOBS."""
    from callsite.mlir import _state as _mlir_knobs

    knobs = _mlir_knobs.KNOBS
    saved = (knobs.limit, dict(knobs.flags), set(knobs.explicitly_set))
    try:
        callsite.mlir.set_loc_tracebacks_frame_limit(700)
        assert knobs.limit == callsite.mlir.loc_tracebacks_frame_limit() == 512
        callsite.mlir.set_traceback_action_on_current_loc("nameloc_wrap")
        assert knobs.flags["current"] is True
        assert callsite.mlir.traceback_action_on_current_loc() == "nameloc_wrap"
        with pytest.raises(ValueError, match="action must be one of"):
            callsite.mlir.set_traceback_action_on_explicit_loc("sometimes")
        assert callsite.mlir.traceback_action_on_explicit_loc() == "use_explicit"
    finally:
        knobs.limit, knobs.flags, knobs.explicitly_set = saved
