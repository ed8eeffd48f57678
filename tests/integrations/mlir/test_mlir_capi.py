"""Locations built through MLIR's C API (src/mlir/capi.*, build_capi.*) and through the
bindings' Python API (the fallback): which bindings take which path, that both give MLIR's own
loc_tracebacks() text over generated programs with a new Context per kernel, that lookups
survive Python code run from inside them, and that dead Contexts are freed.

Every test that takes the `path` fixture runs twice: through the C API (where the bindings'
library exports it, as iree's does) and forced through the Python API on the same bindings.
"""
import gc
import random
import sys
import weakref

import pytest

import callsite
import callsite.mlir
import mlir_support as H

IREE = "iree.compiler.ir"


@pytest.fixture(params=["c_api", "python_api"])
def path(request):
    """(ir, path): iree's bindings building locations through `path`."""
    ir = H.import_ir(IREE)
    b = callsite.mlir.use(ir)
    if request.param == "c_api":
        # iree-base-compiler's libIREECompiler.so exports MLIR's C API (IREE_API_0.0): the fast
        # path must be the one taken, on every Python (abi3 wheels included).
        assert b.location_api.startswith("MLIR C API (") and "libIREECompiler" in b.location_api
    b._use_python_api(request.param == "python_api")
    try:
        yield ir, request.param
    finally:
        b._use_python_api(False)


def expect_path(info, path):
    """The cache of a context built through the path under test (and not the other)."""
    assert info is not None and info["frames"] > 0
    assert (info["finals"] > 0) == (path == "c_api"), info


def test_location_api_is_reported():
    ir = H.import_ir(IREE)
    b = callsite.mlir.use(ir)
    assert b.location_api.startswith("MLIR C API (")
    b._use_python_api(True)
    try:
        assert b.location_api.startswith("Python API (forced")
    finally:
        b._use_python_api(False)
    assert b.location_api.startswith("MLIR C API (")


def test_bindings_without_the_exported_api_take_the_python_api_path():
    """jaxlib links MLIR into its extension with hidden symbols: the Python API path, and the
    same locations as iree's C API path gives for the same stack."""
    ir = H.import_ir("jaxlib.mlir.ir")
    b = callsite.mlir.use(ir)
    assert b.location_api.startswith("Python API (") and "exports" in b.location_api
    with H.context(ir) as ctx:
        text = str(callsite.mlir.location())
        info = callsite.mlir.cache_info(ctx)
    assert __file__ in text and info["finals"] == 0 and info["frames"] > 0


# --- generated programs, a new Context per kernel, against MLIR's own walk ----------------------

def generated_program(seed):
    """Source of a random program: helpers f0..fN, each calling later ones (so ops share their
    outer frames), through lambdas and comprehensions, recursing, building ops on one line or
    across lines, some helpers named outside ASCII. `B` bounds the ops of one kernel."""
    rng = random.Random(seed)
    n = rng.randint(3, 7)
    names = [f"f{i}" + ("é" if rng.random() < 0.2 else "") for i in range(n)]
    lines = ["B = [0]", ""]
    for i, name in enumerate(names):
        lines += [f"def {name}(ir, depth):", "    if B[0] <= 0:", "        return"]
        later = names[i + 1:]
        for _ in range(rng.randint(1, 4)):
            kind = rng.choice(["op", "op", "multiline", "call", "lambda", "comprehension",
                               "recurse", "closure"])
            callee = rng.choice(later) if later else None
            if kind == "multiline":
                lines += ["    B[0] -= 1", "    ir.Operation.create(", "        'test.op')"]
            elif kind == "recurse":
                lines.append(f"    if depth > 0: {name}(ir, depth - 1)")
            elif callee is None or kind == "op":
                lines += ["    B[0] -= 1", "    ir.Operation.create('test.op')"]
            elif kind == "call":
                lines.append(f"    {callee}(ir, depth)")
            elif kind == "lambda":
                lines.append(f"    (lambda: {callee}(ir, depth))()")
            elif kind == "comprehension":
                lines.append(f"    [{callee}(ir, depth) for _ in range(2)]")
            else:
                lines += ["    def inner():", f"        return {callee}(ir, depth)", "    inner()"]
        lines += ["    B[0] -= 1", "    ir.Operation.create('test.op')", ""]
    lines += ["def kernel(ir, budget):", "    B[0] = budget", f"    {names[0]}(ir, 2)", ""]
    return "\n".join(lines)


def build_in_new_context(ir, kernel, scope, budget=60):
    """One kernel built in a new Context (as a DSL's JIT does per compile): every op's location
    text, and the context's callsite cache info."""
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    with ctx, ir.Location.unknown():
        module = ir.Module.create()
        with ir.InsertionPoint(module.body), scope():
            kernel(ir, budget)
        texts = [str(op.location) for op in module.body.operations]
        info = callsite.mlir.cache_info(ctx)
    return texts, info


@pytest.mark.parametrize("seed", range(12))
def test_generated_programs_new_context_per_kernel(path, tmp_path, seed):
    ir, which = path
    if H.mlir_walk_refusal(ir):
        pytest.skip(H.mlir_walk_refusal(ir))
    H.register_support_exclusion(ir)
    prog = H.write_program(tmp_path, f"gen{seed}", generated_program(seed))
    limit = random.Random(seed).choice([1, 2, 4, 10, 30])
    ways = {"mlir": lambda: ir.loc_tracebacks(max_depth=limit),
            "callsite": lambda: callsite.mlir.loc_tracebacks(max_depth=limit, ir=ir)}
    for build in range(2):  # the second kernel: process-wide symbolization, new per-Context tables
        out = {}
        for way, scope in ways.items():  # one call site for both
            out[way] = build_in_new_context(ir, prog.kernel, scope)
        (mlir, _), (ours, info) = out["mlir"], out["callsite"]
        assert len(mlir) > 1
        assert ours == mlir
        assert any(f"gen{seed}.py" in t for t in ours)
        expect_path(info, which)


@pytest.mark.parametrize("dropped", [0, 5, 20, 45])
@pytest.mark.parametrize("limit", [1, 10, 32, 33])
def test_many_dropped_frames_inside_the_kept_ones(path, tmp_path, dropped, limit):
    """Ops made under `dropped` frames of an excluded file, in a new Context per kernel and
    again in the same Context: the kept frames lie past the first frames walked, and the whole
    stack is stored once its location repeats; MLIR's own text."""
    ir, which = path
    if H.mlir_walk_refusal(ir):
        pytest.skip(H.mlir_walk_refusal(ir))
    H.register_support_exclusion(ir)
    lib = H.write_program(tmp_path, f"deep{dropped}", '''
        def down(ir, n):
            if n <= 0:
                return [ir.Operation.create("test.op"), ir.Operation.create("test.op")]
            return down(ir, n - 1)
    ''')
    ir._globals.register_traceback_file_exclusion(lib.__file__)
    callsite.mlir.register_traceback_file_exclusion(lib.__file__)
    user = H.write_program(tmp_path, f"user{dropped}_{limit}", f'''
        def kernel(ir, budget, lib):
            for _ in range(2):
                a(ir, lib)
        def a(ir, lib):
            return b(ir, lib)
        def b(ir, lib):
            return lib.down(ir, {dropped})
    ''')
    ways = {"mlir": lambda: ir.loc_tracebacks(max_depth=limit),
            "callsite": lambda: callsite.mlir.loc_tracebacks(max_depth=limit, ir=ir)}
    out = {}
    for way, scope in ways.items():
        out[way] = build_in_new_context(ir, lambda ir, budget: user.kernel(ir, budget, lib), scope)
    (mlir, _), (ours, info) = out["mlir"], out["callsite"]
    assert len(mlir) == 4 and ours == mlir
    assert all(f"user{dropped}_{limit}.py" in t and "deep" not in t for t in ours)
    expect_path(info, which)
    # One location for the four ops (their frames differ only in the excluded file): the C API
    # path counts a lookup by whether its location was made before, the Python API path by
    # whether its whole stack was seen (the loop's second pass repeats the first's two).
    assert (info["misses"], info["hits"]) == ((1, 3) if which == "c_api" else (2, 2))


def test_python_310_and_311_forms(path, tmp_path):
    """3.10: NameLoc(co_name, FileLineColLoc(file, line, 0)); 3.11+: NameLoc(co_qualname,
    FileLineColRange(file, line, col, end_line, end_col)), here across lines; MLIR's own text
    where its walk records frames."""
    ir, which = path
    prog = H.write_program(tmp_path, "forms", '''
        class K:
            def method(self, ir):
                return ir.Operation.create(
                    "test.op")
    ''')
    why = H.mlir_walk_refusal(ir)
    H.register_support_exclusion(ir)
    f = H.support_filter()
    ways = {"callsite": lambda: callsite.mlir.auto_locations(f, limit=1, ir=ir),
            "mlir": lambda: ir.loc_tracebacks(max_depth=1)}
    out = {}
    with H.context(ir) as ctx:
        for way, scope in ways.items():
            with scope():
                out[way] = str(prog.K().method(ir).location)
        expect_path(callsite.mlir.cache_info(ctx), which)
    text = out["callsite"]
    where = f'"{tmp_path / "forms.py"}"'
    if sys.version_info >= (3, 11):
        assert text.startswith(f'loc("K.method"({where}:4:') and " to 5:" in text, text
    else:
        assert text.startswith(f'loc("method"({where}:') and text.endswith(":0))"), text
    if not why:
        assert text == out["mlir"]


def test_whole_stack_level_holds_repeated_locations_only(path, tmp_path):
    """On the C API path a stack is stored whole only once its location repeats (a first build
    in a Context stores none; the trie of call-site links answers), and the next build in the
    same Context is answered by whole stacks; the Python API path stores every stack. Same
    texts, same hits and misses on both."""
    ir, which = path
    prog = H.write_program(tmp_path, "rep", '''
        def build(ir):
            return [ir.Operation.create("test.op"),
                    ir.Operation.create("test.op"),
                    ir.Operation.create("test.op")]
    ''')
    texts, infos = [], []
    with H.context(ir) as ctx, callsite.mlir.auto_locations(ir=ir):
        for _ in range(3):
            texts.append([str(op.location) for op in prog.build(ir)])
            infos.append(callsite.mlir.cache_info(ctx))
    assert texts[0] == texts[1] == texts[2] and len(set(texts[0])) == 3
    assert all("rep.py" in t for t in texts[0])
    expect_path(infos[0], which)
    assert [(i["misses"], i["hits"]) for i in infos] == [(3, 0), (3, 3), (3, 6)]
    assert [i["stacks"] for i in infos] == ([0, 3, 3] if which == "c_api" else [3, 3, 3])


def test_context_current_follows_nested_contexts_and_threads(path):
    """callsite calls the getter of the static property Context.current directly (while the
    class keeps its version tag): the context it gives changes with `with` blocks and threads
    as the attribute's does, and an op built outside any context gets MLIR's own error."""
    import threading
    ir, _ = path
    seen = []

    def build(tag, ctx):
        op = ir.Operation.create("test.op")
        seen.append((tag, op.context == ctx, str(op.location)))

    def in_thread(ctx):
        try:
            with ctx, callsite.mlir.auto_locations(ir=ir):  # scopes are per thread
                module = ir.Module.create(ir.Location.unknown())
                with ir.InsertionPoint(module.body):
                    build("thread", ctx)
        except BaseException as e:  # noqa: BLE001 - reported by the assertion below
            seen.append(("thread", repr(e), ""))

    with callsite.mlir.auto_locations(ir=ir):
        with H.context(ir) as outer:
            build("outer", outer)
            with H.context(ir) as inner:
                build("inner", inner)
                worker = threading.Thread(target=in_thread, args=(outer,))
                worker.start()
                worker.join()
                build("inner", inner)
                inner_info = callsite.mlir.cache_info(inner)
            build("outer", outer)
            outer_info = callsite.mlir.cache_info(outer)
        with pytest.raises(Exception) as with_callsite:
            ir.Operation.create("test.op")
    with pytest.raises(type(with_callsite.value)) as without:
        ir.Operation.create("test.op")
    assert str(with_callsite.value) == str(without.value)
    assert [(tag, same) for tag, same, _ in seen] == [
        ("outer", True), ("inner", True), ("thread", True), ("inner", True), ("outer", True)]
    assert inner_info["misses"] == 2 and outer_info["misses"] == 3, (inner_info, outer_info)
    # nanobind's static property, found and called directly on every version.
    assert callsite.mlir.use(ir)._direct_current is True
    assert all("test_mlir_capi.py" in text for _, _, text in seen), seen


# --- Python code run from inside a lookup ------------------------------------------------------

def test_context_finalizers_clearing_caches_inside_lookups(path, tmp_path):
    """Contexts in reference cycles whose finalizer calls clear_caches(), collected at every
    few allocations: a collection (and so clear_caches()) runs inside callsite's lookups, between
    building raw handles and making the ir.Location. Every op's location is still callsite's
    Traceback of the same call site."""
    ir, which = path
    prog = H.write_program(tmp_path, "fin", '''
        def leaf(ir, f):
            return H.make(ir, f)

        def mid(ir, f, i):
            return [leaf(ir, f) for _ in range(i % 3 + 1)]
    ''')

    class Ctx(ir.Context):
        def __del__(self):
            callsite.mlir.clear_caches()

    f = H.support_filter()
    old = gc.get_threshold()
    gc.set_threshold(5, 1, 1)
    try:
        with callsite.mlir.auto_locations(f, ir=ir):
            for i in range(40):
                ctx = Ctx()
                ctx.cycle = ctx  # freed by a collection, at some allocation
                ctx.allow_unregistered_dialects = True
                with ctx:
                    module = ir.Module.create(ir.Location.unknown())
                    with ir.InsertionPoint(module.body):
                        for text, expected in prog.mid(ir, f, i):
                            assert text == expected
                del ctx, module
    finally:
        gc.set_threshold(*old)
        gc.collect()


def clearing_jit():
    """A JIT executable whose reifier calls clear_caches() before describing state n as
    "jit.dsl" line n + 1, columns 2 to 9: Python code run inside every lookup."""
    from callsite import native

    def reify(state):
        callsite.mlir.clear_caches()
        return native.Location("jit.dsl", state + 1, end_lineno=state + 1, colno=2, end_colno=9)

    return native.Executable("jit", reify)


def test_reifier_clearing_caches_inside_a_lookup(path):
    """A native frame's reifier runs inside the lookup (symbolization, between raw links) and
    calls clear_caches(): the location is still right, and the same on both paths."""
    ir, which = path
    with H.context(ir) as ctx:
        frame = clearing_jit().frame(0)
        with frame:
            for state in range(20):
                frame.state = state
                text = str(callsite.mlir.location())
                assert f'"jit"("jit.dsl":{state + 1}:2 to :9)' in text or (
                    sys.version_info < (3, 11) and f'"jit"("jit.dsl":{state + 1}:0)' in text), text
                assert __file__ in text
        info = callsite.mlir.cache_info(ctx)
        assert info is None or (info["finals"] > 0) == (which == "c_api")


class HostileStr(str):
    """A file name whose Python-level methods call callsite: a str's bytes are read directly."""

    def __hash__(self):
        callsite.mlir.clear_caches()
        return str.__hash__(self)

    def __eq__(self, other):
        callsite.mlir.clear_caches()
        return str.__eq__(self, other)

    def __str__(self):
        callsite.mlir.clear_caches()
        return "not the file name"


def test_str_subclass_file_name(path, tmp_path):
    ir, which = path
    plain = str(tmp_path / "hostile.py")
    namespace = {}
    exec(compile("def emit(ir, loc):\n    return loc()\n", plain, "exec"), namespace)
    emit = namespace["emit"]
    file = HostileStr(plain)
    emit.__code__ = emit.__code__.replace(co_filename=file)
    assert type(emit.__code__.co_filename) is HostileStr
    with H.context(ir) as ctx:
        text = str(emit(ir, callsite.mlir.location))
        expect_path(callsite.mlir.cache_info(ctx), which)
    assert f'"emit"("{plain}":2:11 to :16)' in text or (
        sys.version_info < (3, 11) and f'"emit"("{plain}":2:0)' in text), text


def test_nameloc_wrap_of_a_plain_location_current(path, tmp_path):
    """MLIR's NAMELOC_WRAP looks at what Location.current is (mlirLocationIsAName), not at its
    Python class: a NameLoc held as a plain ir.Location (as _CAPICreate and op.location give it)
    wraps too."""
    ir, which = path
    if H.mlir_walk_refusal(ir):
        pytest.skip(H.mlir_walk_refusal(ir))
    H.register_support_exclusion(ir)
    prog = H.write_program(tmp_path, "wrap", '''
        def build(ir):
            return str(ir.Operation.create("test.op").location)
    ''')
    out = {}
    with H.context(ir):
        named = ir.Location.name("outer", childLoc=ir.Location.name("inner"))
        plain = ir.Location._CAPICreate(named._CAPIPtr)
        assert type(plain) is ir.Location
        for name, scope in {
                "mlir": lambda: ir.loc_tracebacks(current_loc_actn=ir.CurrentLocAction.NAMELOC_WRAP),
                "callsite": lambda: callsite.mlir.loc_tracebacks(current_loc="nameloc_wrap", ir=ir),
        }.items():
            with plain, scope():
                out[name] = prog.build(ir)
    assert out["mlir"].startswith('loc("outer"("inner"(')
    assert out["callsite"] == out["mlir"]


# --- dead Contexts ---------------------------------------------------------------------------

def test_dead_contexts_are_freed(path):
    """1,000 Contexts (200 on the Python API path), each building a few ops with callsite's
    locations: none is kept alive beyond the next one's first lookup, none after a collection."""
    ir, which = path
    n = 1000 if which == "c_api" else 200
    refs = []
    most_alive = 0
    with callsite.mlir.loc_tracebacks(ir=ir):
        for i in range(n):
            ctx = ir.Context()
            ctx.allow_unregistered_dialects = True
            refs.append(weakref.ref(ctx))
            with ctx, ir.Location.unknown():
                module = ir.Module.create()
                with ir.InsertionPoint(module.body):
                    for _ in range(3):
                        ir.Operation.create("test.op")
            if i == 0:
                expect_path(callsite.mlir.cache_info(ctx), which)
            del ctx, module
            if i % 50 == 0:
                most_alive = max(most_alive, sum(r() is not None for r in refs))
                assert callsite._callsite.mlir.cache_count() <= 2
    assert most_alive <= 2
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


# --- what an explicit location() returns ---------------------------------------------------

TYPED = {"chain": "CallSiteLoc", "frame": "NameLoc", "none": "UnknownLoc",
         "nameloc_wrap": "CallSiteLoc", "traceback": "CallSiteLoc"}


def explicit_location(ir, case):
    """callsite.mlir.location() in one of its forms, always at the same call sites."""
    if case == "chain":
        return callsite.mlir.location()
    if case == "frame":
        return callsite.mlir.location(limit=1)
    if case == "none":
        return callsite.mlir.location(limit=0)
    if case == "traceback":
        return callsite.mlir.location(callsite.capture())
    # Under a NAMELOC_WRAP scope, which wraps what op builders receive, not what location()
    # returns.
    with ir.Location.name("outer"), callsite.mlir.loc_tracebacks(current_loc="nameloc_wrap", ir=ir):
        return callsite.mlir.location()


@pytest.mark.parametrize("case", sorted(TYPED))
def test_explicit_location_is_typed(path, case):
    """The typed location the bindings give (ir.CallSiteLoc...), as op.location gives for it and
    as the Python API path returns; made once per distinct location: a repeated call returns
    the same object and holds nothing more."""
    ir, which = path
    b = callsite.mlir.use(ir)
    seen = []
    try:
        # The path under test, then the Python API path (the reference) from the same line.
        for forced in (which == "python_api", True):
            b._use_python_api(forced)
            with H.context(ir) as ctx:
                locs, held = [], []
                for _ in range(3):
                    locs.append(explicit_location(ir, case))
                    held.append(callsite.mlir.cache_info(ctx)["held"])
                loc = locs[0]
                seen.append((type(loc), str(loc)))
                assert all(other is loc for other in locs[1:])
                assert held[0] == held[1] == held[2], held
                info = callsite.mlir.cache_info(ctx)
                if not forced:  # the C API path: one final ir.Location and its typed one
                    assert info["finals"] == 1 and info["held"] == 2, info
                assert type(loc) is getattr(ir, TYPED[case])
                op = ir.Operation.create("test.op", loc=loc)
                assert type(op.location) is type(loc) and str(op.location) == str(loc)
                if case == "frame":
                    assert loc.name_str == "explicit_location"
                if TYPED[case] == "CallSiteLoc":
                    assert str(loc) == (
                        f"loc(callsite({str(loc.callee)[4:-1]} at {str(loc.caller)[4:-1]}))")
                    assert type(loc.callee) is ir.NameLoc
                del loc, locs, op
    finally:
        b._use_python_api(which == "python_api")
    assert seen[0] == seen[1]


def test_explicit_locations_across_clear_caches(path):
    """clear_caches() from a reifier inside every lookup, and between calls: a typed location is
    dropped with the final location it was made of, never returned for another one (whose
    ir.Location may reuse the freed one's address)."""
    ir, which = path
    with H.context(ir) as ctx:
        frame = clearing_jit().frame(0)
        with frame:
            for state in range(40):
                frame.state = state % 7
                for limit in (1, 2):
                    loc = callsite.mlir.location(limit=limit)
                    text = str(loc)
                    assert (f'"jit"("jit.dsl":{state % 7 + 1}:2 to :9)' in text or (
                        sys.version_info < (3, 11)
                        and f'"jit"("jit.dsl":{state % 7 + 1}:0)' in text)), text
                    assert type(loc) is (ir.NameLoc if limit == 1 else ir.CallSiteLoc)
                    if limit == 2:
                        assert str(loc.callee)[4:-1] in text and __file__ in str(loc.caller)
                    if state % 3 == 0:
                        callsite.mlir.clear_caches()
                    del loc
        info = callsite.mlir.cache_info(ctx)
        assert info is None or info["held"] <= 2 * info["finals"] + 1, info


def test_explicit_locations_with_context_finalizers_clearing_caches(path, tmp_path):
    """Contexts in reference cycles whose finalizer calls clear_caches(), collected at every
    few allocations while explicit locations are made: each is typed and right, and nothing
    keeps the Contexts alive once the caches are cleared."""
    ir, which = path
    prog = H.write_program(tmp_path, "explicit_fin", '''
        def leaf(callsite, i):
            return callsite.mlir.location(limit=1 + i % 3)

        def mid(callsite, i):
            return [leaf(callsite, i) for _ in range(i % 4 + 1)]
    ''')

    class Ctx(ir.Context):
        def __del__(self):
            callsite.mlir.clear_caches()

    refs = []
    old = gc.get_threshold()
    gc.set_threshold(5, 1, 1)
    try:
        for i in range(60):
            ctx = Ctx()
            ctx.cycle = ctx  # freed by a collection, at some allocation
            refs.append(weakref.ref(ctx))
            with ctx:
                for loc in prog.mid(callsite, i):
                    expected = ir.NameLoc if i % 3 == 0 else ir.CallSiteLoc
                    assert type(loc) is expected, (i, loc)
                    assert '"leaf"(' in str(loc) and "explicit_fin.py" in str(loc)
                    if expected is ir.CallSiteLoc:
                        assert str(loc.callee).startswith('loc("leaf"(')
            del ctx, loc
    finally:
        gc.set_threshold(*old)
    # A Context in a reference cycle looks referenced from outside its cache's locations (the
    # cycle's reference): its cache goes only with clear_caches(), then the cycle is collected.
    callsite.mlir.clear_caches()
    gc.collect()
    assert sum(r() is not None for r in refs) == 0


def test_explicit_locations_do_not_keep_their_context_alive(path):
    """A typed location holds its Context as a plain one does: a Context whose only references
    are the cache's own locations (finals and typed ones) is freed."""
    ir, which = path
    refs = []
    for i in range(200):
        ctx = ir.Context()
        refs.append(weakref.ref(ctx))
        with ctx:
            base = sys.getrefcount(ctx)
            unknown = ir.Location.unknown()
            per_location = sys.getrefcount(ctx) - base
            del unknown
            loc = callsite.mlir.location()
            assert type(loc) is ir.CallSiteLoc
            del loc
            if which == "c_api":  # the final ir.Location and its typed one, each holding ctx
                assert callsite.mlir.cache_info(ctx)["held"] == 2
                assert sys.getrefcount(ctx) - base == 2 * per_location > 0
        del ctx
        if i % 50 == 0:
            assert sum(r() is not None for r in refs) <= 2
            assert callsite._callsite.mlir.cache_count() <= 2
    gc.collect()
    assert sum(r() is not None for r in refs) == 0
