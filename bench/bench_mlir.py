"""bench_mlir — what a source location costs per MLIR op: callsite.mlir vs MLIR's loc_tracebacks().

    python bench/bench_mlir.py [--ops 100000] [--repeats 5] [--quick] [--json PATH]

Scenario 1: ops (arith.constant + arith.addi) built in a DSL function called from a 10–20-frame
stack, with (a) Location.unknown(), (b) MLIR's loc_tracebacks(), (c) callsite auto_locations,
(d) an explicit loc=callsite.mlir.location(), and (c') the same as (c) through a Python wrapper of
OpView.__init__ instead of callsite's C++ one (the injection mechanism measured). Scenario 2: one
long straight-line kernel of 5k ops, cost per op along the function. Scenario 3: one location,
cache hit and miss. Scenario 4: the kernel boundary, a 20-frame kernel under 200 framework
frames against the same kernel alone and MLIR's walk with max_depth=40. Ratios are from the same run (min of the repeats, modes interleaved);
a peer that is unavailable is skipped with the reason.

Scenario 5, the cold path (``--contexts`` runs it alone; iree's bindings): a kernel of six nested
helpers (``--kernel-ops 60,400``: 64 and 379 ops) built in ONE Context and in a NEW Context per
build, with (a) no locations, (b) MLIR's ``loc_tracebacks(max_depth=10)``, (c) the same switch
served by callsite (``callsite.mlir.accelerate``): process CPU time per build (min and median of
at least six interleaved repeats) and, unless ``--no-callgrind``, instructions per build
(callgrind collecting only the measured builds; ``--keep-callgrind DIR`` keeps the files, which
``bench/callgrind_breakdown.py`` and ``bench/cold_report.py`` read).
"""
from __future__ import annotations

import contextlib
import gc
import importlib
import os
import sys
import time

import callsite
import callsite.mlir

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for _common (bench only)
import _common  # noqa: E402

DEPTH = 14  # helper frames between the benchmark driver and the DSL function


# --- bindings ----------------------------------------------------------------------------

def installed_bindings():
    """(name, ir, arith, make_context) for every distribution of the bindings installed."""
    out = []
    try:
        from iree.compiler import ir
        from iree.compiler.dialects import arith
        out.append(("iree.compiler.ir", ir, arith, ir.Context))
    except ImportError as e:
        print(f"skipping iree-base-compiler: {e}")
    try:
        ext = importlib.import_module("jaxlib.mlir._mlir_libs._jax_mlir_ext")
        from jaxlib.mlir import ir as jir
        from jaxlib.mlir.dialects import arith as jarith

        def jax_context(ir=jir, ext=ext):
            registry = ir.DialectRegistry()
            ext.register_dialects(registry)
            ctx = ir.Context()
            ctx.append_dialect_registry(registry)
            ctx.load_all_available_dialects()
            return ctx

        out.append(("jaxlib.mlir.ir", jir, jarith, jax_context))
    except (ImportError, AttributeError) as e:
        print(f"skipping jaxlib: {e}")
    return out


def mlir_walk_refusal(ir, make_context):
    if not hasattr(ir, "loc_tracebacks"):
        return "no loc_tracebacks() in these bindings"
    with make_context(), ir.Location.unknown():
        ctx = ir.Context.current
        ctx.allow_unregistered_dialects = True
        with ir.loc_tracebacks():
            loc = str(ir.Operation.create("bench.probe").location)
    if loc == "loc(unknown)":
        return ("its loc_tracebacks() records no frames in this build (stable-ABI wheel on "
                f"Python {sys.version_info[0]}.{sys.version_info[1]})")
    return None


def deep(n, fn, *args):
    return deep(n - 1, fn, *args) if n else fn(*args)


def stack_depth():
    return deep(DEPTH, lambda: len(callsite.capture())) - 1


# --- scenario 1 --------------------------------------------------------------------------

def dsl_kernel(arith, i32, n):
    for _ in range(n // 2):
        c = arith.ConstantOp(i32, 1)
        arith.AddIOp(c.result, c.result)


def dsl_kernel_explicit(arith, i32, n):
    location = callsite.mlir.location
    for _ in range(n // 2):
        c = arith.ConstantOp(i32, 1, loc=location())
        arith.AddIOp(c.result, c.result, loc=location())


@contextlib.contextmanager
def python_wrapper(ir):
    """The alternative mechanism: a Python function in place of OpView.__init__."""
    original = ir.OpView.__dict__["__init__"]
    location = callsite.mlir.location

    def __init__(self, *args, loc=None, **kwargs):
        if loc is None and args and isinstance(args[0], str):
            loc = location(skip=1)
        return original(self, *args, loc=loc, **kwargs)

    ir.OpView.__init__ = __init__
    try:
        with callsite.mlir.auto_locations(ir=ir):  # location()'s filter: the defaults
            yield
    finally:
        ir.OpView.__init__ = original


def scenario_ops(name, ir, arith, make_context, n, repeats, mlir_why):
    print(f"\n## scenario 1: {n} ops (arith.constant + arith.addi), DSL function at stack depth "
          f"{stack_depth() + 1}, {name}, Python {sys.version.split()[0]}")
    modes = {
        "(a) Location.unknown()": (dsl_kernel, contextlib.nullcontext),
        "(b) MLIR loc_tracebacks()": (dsl_kernel, ir.loc_tracebacks) if not mlir_why else None,
        "(c) callsite auto_locations": (dsl_kernel, lambda: callsite.mlir.auto_locations(ir=ir)),
        "(d) callsite loc=location()": (dsl_kernel_explicit, contextlib.nullcontext),
        "(c') Python wrapper of OpView.__init__": (dsl_kernel, lambda: python_wrapper(ir)),
    }
    best = {}
    with make_context(), ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        for _ in range(repeats):
            for label, mode in modes.items():
                if mode is None:
                    continue
                kernel, scope = mode
                module = ir.Module.create()
                gc.collect()
                with ir.InsertionPoint(module.body), scope():
                    t = time.perf_counter()
                    deep(DEPTH, kernel, arith, i32, n)
                    dt = time.perf_counter() - t
                del module
                best[label] = min(best.get(label, dt), dt)
    a = best["(a) Location.unknown()"] / n * 1e9
    print(f"{'mode':40} {'ns/op':>8} {'vs (a)':>8} {'location cost ns/op':>20}")
    for label in modes:
        if label not in best:
            print(f"{label:40} {'skipped':>8}  ({mlir_why})")
            continue
        v = best[label] / n * 1e9
        print(f"{label:40} {v:8.0f} {v / a:8.3f} {v - a:20.0f}")
    c = best["(c) callsite auto_locations"] / n * 1e9
    print(f"target (c) <= 1.15 x (a): {c / a:.3f} {'met' if c <= 1.15 * a else 'NOT met'}")
    if "(b) MLIR loc_tracebacks()" in best:
        b = best["(b) MLIR loc_tracebacks()"] / n * 1e9
        ratio = (b - a) / max(c - a, 1e-9)
        print(f"target (c-a) <= (b-a)/5: callsite overhead {c - a:.0f} ns vs MLIR {b - a:.0f} ns: "
              f"{ratio:.1f}x less {'(met)' if c - a <= (b - a) / 5 else '(NOT met)'}")
    return {label: v / n * 1e9 for label, v in best.items()}


# --- scenario 2: one long straight-line kernel -------------------------------------------

def long_kernel_source(n_ops, chunk):
    lines = ["def kernel(arith, i32, clock, marks):", "    c = arith.constant(i32, 1)"]
    for i in range(n_ops):
        if i % chunk == 0:
            lines.append("    marks.append(clock())")
        lines.append("    arith.addi(c, c)")
    lines.append("    marks.append(clock())")
    return "\n".join(lines) + "\n"


def scenario_long_kernel(name, ir, arith, make_context, n_ops, repeats, mlir_why):
    chunk = n_ops // 10
    ns = {}
    exec(compile(long_kernel_source(n_ops, chunk), "<bench long kernel>", "exec"), ns)
    kernel = ns["kernel"]
    modes = {"(a) unknown": contextlib.nullcontext,
             "(b) MLIR": ir.loc_tracebacks if not mlir_why else None,
             "(c) callsite, first build": lambda: callsite.mlir.auto_locations(ir=ir),
             "(c) callsite, rebuilt": lambda: callsite.mlir.auto_locations(ir=ir)}
    best = {}
    for _ in range(repeats):
        for label, scope in modes.items():
            if scope is None:
                continue
            fresh = label != "(c) callsite, rebuilt"
            if fresh:
                ctx = make_context()
            with ctx, ir.Location.unknown():
                i32 = ir.IntegerType.get_signless(32)
                module = ir.Module.create()
                marks = []
                with ir.InsertionPoint(module.body), scope():
                    deep(DEPTH, kernel, arith, i32, time.perf_counter_ns, marks)
                per_chunk = [(b - a) / chunk for a, b in zip(marks, marks[1:])]
                del module
            best[label] = [min(x, y) for x, y in zip(best.get(label, per_chunk), per_chunk)]
    print(f"\n## scenario 2: one straight-line kernel of {n_ops} ops, ns/op per tenth of the "
          f"function ({name})")
    print(f"{'mode':26} " + " ".join(f"{f'#{i}':>7}" for i in range(10)) + f" {'last/first':>10}")
    for label in modes:
        if label not in best:
            print(f"{label:26} skipped ({mlir_why})")
            continue
        row = best[label]
        print(f"{label:26} " + " ".join(f"{v:7.0f}" for v in row) + f" {row[-1] / row[0]:10.2f}")
    if "(b) MLIR" in best:
        a, b = best["(a) unknown"], best["(b) MLIR"]
        c = best["(c) callsite, first build"]
        print(f"location cost, first tenth -> last tenth: MLIR {b[0] - a[0]:.0f} -> "
              f"{b[-1] - a[-1]:.0f} ns/op; callsite (first build) {c[0] - a[0]:.0f} -> "
              f"{c[-1] - a[-1]:.0f} ns/op")
    return best


# --- scenario 3: one location ------------------------------------------------------------

def scenario_one_location(name, ir, make_context, n):
    print(f"\n## scenario 3: one location at stack depth {stack_depth() + 1}, ns per call ({name})")
    src = ["def sites(location):"] + ["    location()" for _ in range(2000)]
    ns = {}
    exec(compile("\n".join(src) + "\n", "<bench call sites>", "exec"), ns)
    location = callsite.mlir.location
    rows = {}
    with make_context(), ir.Location.unknown():
        def hits():
            for _ in range(n):
                location()

        def captures():
            for _ in range(n):
                callsite.capture()

        for label, fn, count in (("location(), cache hit", hits, n),
                                 ("location(), new call site (callers cached)",
                                  lambda: ns["sites"](location), 2000),
                                 ("callsite.capture() (no location)", captures, n)):
            best = float("inf")
            for _ in range(5):
                if "new call site" in label:
                    callsite.mlir.clear_caches()
                    deep(DEPTH, location)  # warm the callers' frames and chains
                t = time.perf_counter()
                deep(DEPTH, fn)
                best = min(best, time.perf_counter() - t)
            rows[label] = best / count * 1e9
        best = float("inf")
        for _ in range(200):
            callsite.mlir.clear_caches()
            t = time.perf_counter()
            deep(DEPTH, location)
            best = min(best, time.perf_counter() - t)
        rows["location(), empty cache (every level misses)"] = best * 1e9
        frames = [ir.Location.name(f"f{i}", childLoc=ir.Location.file("bench.py", i, 4, i, 20))
                  for i in range(10)]
        t = time.perf_counter()
        for _ in range(2000):
            ir.Location.callsite(frames[0], frames[1:])
        rows["MLIR API only: Location.callsite over 10 cached NameLocs"] = (
            (time.perf_counter() - t) / 2000 * 1e9)
    for label, v in rows.items():
        print(f"{label:58} {v:9.0f}")
    return rows


# --- scenario 4: the kernel boundary ----------------------------------------------------

def kernel_chain(levels, work, n):
    """The user's kernel: `levels` frames of helpers (the kernel's own frame included) above
    `work(n)`, which builds the ops or takes the locations."""
    if levels > 1:
        return kernel_chain(levels - 1, work, n)
    return work(n)


def bounded_kernel(work, n, levels):
    return kernel_chain(levels - 1, work, n)


def in_thread(fn):
    """fn() run on a new thread (its stack holds only threading's frames); its result."""
    import threading
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def scenario_boundary(name, ir, arith, make_context, n, repeats, mlir_why, kernel_depth=20,
                      program_depth=200):
    """A kernel of `kernel_depth` frames run under `program_depth` frames of framework, with
    the kernel boundary: a location should cost what it costs at depth `kernel_depth` alone,
    and far less than MLIR's walk with a limit of 40."""
    print(f"\n## scenario 4: kernel boundary, a kernel of {kernel_depth} frames under "
          f"{program_depth} framework frames ({name})")
    flt = callsite.Filter()
    flt.limit = kernel_depth  # the whole chain is kept: every case renders the same length
    location = callsite.mlir.location
    limit_before = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit_before, program_depth * 4))

    def locations(count):
        for _ in range(count):
            location(flt)

    def ops(count):
        for _ in range(count):
            arith.ConstantOp(i32, 1)

    def run(work, below, levels, scope):
        def go():
            with scope():
                t = time.perf_counter()
                deep(below, bounded_kernel, work, n, levels)
                return time.perf_counter() - t
        return go

    # (1) callsite.mlir.location() per call at the kernel's top (cache hits), each case in a
    # thread of its own so that "alone" is a stack of exactly kernel_depth frames.
    base = in_thread(lambda: len(callsite.capture()) - 1)
    alone = max(1, kernel_depth - base)
    boundary = lambda: callsite.boundary(bounded_kernel)  # noqa: E731
    calls = {
        f"location(), depth {kernel_depth} alone": (locations, 0, alone, contextlib.nullcontext),
        f"location(), boundary under {program_depth}": (locations, program_depth, kernel_depth,
                                                       boundary),
        f"location(), no boundary under {program_depth}": (locations, program_depth,
                                                          kernel_depth, contextlib.nullcontext),
    }
    # (2) ops built with each location source, minus the same ops with Location.unknown(),
    # on this thread: MLIR's walk has no entry point but building an op.
    under = {
        "ops, Location.unknown()": contextlib.nullcontext,
        "ops, callsite boundary": lambda: callsite.mlir.auto_locations(
            flt, ir=ir, boundary=bounded_kernel),
        "ops, MLIR loc_tracebacks(max_depth=40)": (
            (lambda: ir.loc_tracebacks(max_depth=40)) if not mlir_why else None),
    }
    best = {}
    try:
        with make_context() as ctx, ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            for _ in range(repeats):
                for label, (work, below, levels, scope) in calls.items():
                    def timed(go=run(work, below, levels, scope)):
                        with ctx, ir.Location.unknown(ctx):
                            return go()
                    best[label] = min(best.get(label, float("inf")), in_thread(timed))
                for label, scope in under.items():
                    if scope is None:
                        continue
                    module = ir.Module.create()
                    gc.collect()
                    with ir.InsertionPoint(module.body):
                        dt = run(ops, program_depth, kernel_depth, scope)()
                    del module
                    best[label] = min(best.get(label, float("inf")), dt)
    finally:
        sys.setrecursionlimit(limit_before)
    ns = {label: v / n * 1e9 for label, v in best.items()}
    print(f"{'case':52} {'ns':>8}")
    for label in list(calls) + list(under):
        if label in ns:
            print(f"{label:52} {ns[label]:8.0f}")
        else:
            print(f"{label:52} {'skipped':>8}  ({mlir_why})")
    alone_ns = ns[f"location(), depth {kernel_depth} alone"]
    bounded_ns = ns[f"location(), boundary under {program_depth}"]
    ratio = bounded_ns / alone_ns
    print(f"target: boundary under {program_depth} = depth {kernel_depth} alone (+-10%): "
          f"{ratio:.3f} {'(met)' if 0.9 <= ratio <= 1.1 else '(NOT met)'}")
    if "ops, MLIR loc_tracebacks(max_depth=40)" in ns:
        unknown = ns["ops, Location.unknown()"]
        ours = ns["ops, callsite boundary"] - unknown
        mlir = ns["ops, MLIR loc_tracebacks(max_depth=40)"] - unknown
        less = mlir / max(ours, 1e-9)
        print(f"target: >= 10x less than MLIR's walk with limit 40: callsite {ours:.0f} ns/op, "
              f"MLIR {mlir:.0f} ns/op over the op alone: {less:.1f}x "
              f"{'(met)' if less >= 10 else '(NOT met)'}")
    return ns


# --- reference leaks ---------------------------------------------------------------------

def leak_check(name, ir, make_context, mlir_why, n=10_000):
    def build():
        return ir.Operation.create("bench.op")

    def loop():
        for _ in range(n):
            build().erase()

    print(f"\n## code-object references after {n} ops and dropping them ({name})")
    growth = {}
    for label, scope in (("MLIR loc_tracebacks()", None if mlir_why else ir.loc_tracebacks),
                         ("callsite auto_locations", lambda: callsite.mlir.auto_locations(ir=ir))):
        if scope is None:
            print(f"{label:24} skipped ({mlir_why})")
            continue
        codes = [build.__code__, loop.__code__]
        gc.collect()
        before = [sys.getrefcount(c) for c in codes]
        ctx = make_context()
        ctx.allow_unregistered_dialects = True
        with ctx, ir.Location.unknown():
            module = ir.Module.create()
            with ir.InsertionPoint(module.body), scope():
                loop()
            del module
        del ctx
        gc.collect()
        after = [sys.getrefcount(c) for c in codes]  # same expression as `before`
        grown = [x - y for x, y in zip(after, before)]
        print(f"{label:24} refcount growth: build {grown[0]:+d}, loop {grown[1]:+d} "
              f"({grown[0] / n:.2f} per op)")
        growth[label] = {"build": grown[0], "loop": grown[1], "ops": n}
    return growth


# --- instruction counts (callgrind): deterministic on a noisy machine ----------------------

CG_MODES = {"a": "(a) Location.unknown()", "b": "(b) MLIR loc_tracebacks()",
            "c": "(c) callsite auto_locations", "d": "(d) callsite loc=location()"}


def child(binding, mode, n):
    """Builds n ops in one mode (run under valgrind by callgrind_table)."""
    name, ir, arith, make_context = next(b for b in installed_bindings() if b[0] == binding)
    kernel = dsl_kernel_explicit if mode == "d" else dsl_kernel
    scope = {"a": contextlib.nullcontext, "b": getattr(ir, "loc_tracebacks", None),
             "c": lambda: callsite.mlir.auto_locations(ir=ir), "d": contextlib.nullcontext}[mode]
    with make_context(), ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body), scope():
            deep(DEPTH, kernel, arith, i32, 200)  # warm: caches, specialisation
            gc.collect()
            gc.disable()  # a collection landing in one run and not the other is noise here
            deep(DEPTH, kernel, arith, i32, n)
            gc.enable()


def callgrind_table(binding, mlir_why, small=2_000, large=12_000):
    import shutil
    import subprocess
    if not shutil.which("valgrind"):
        print("\n(instruction counts skipped: valgrind not installed)")
        return {}
    print(f"\n## scenario 1 in instructions (valgrind --tool=callgrind), {binding}: "
          f"Ir per op = (Ir({large} ops) - Ir({small} ops)) / {large - small}, gc disabled")
    per_op = {}
    for mode, label in CG_MODES.items():
        if mode == "b" and mlir_why:
            print(f"{label:40} skipped ({mlir_why})")
            continue
        counts = []
        for n in (small, large):
            # One BLAS thread: numpy's (imported by the bindings) would otherwise spin in the
            # background and its instructions land in the totals at random.
            env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null",
                                sys.executable, __file__, "--child", binding, mode, str(n)],
                               capture_output=True, text=True, env=env)
            line = [x for x in r.stderr.splitlines() if "Collected" in x]
            if r.returncode or not line:
                print(f"{label:40} failed: {r.stderr.strip().splitlines()[-1:]}")
                break
            counts.append(int(line[0].split()[-1].replace(",", "")))
        else:
            per_op[mode] = (counts[1] - counts[0]) / (large - small)
    if "a" not in per_op:
        return {}
    a = per_op["a"]
    print(f"{'mode':40} {'Ir/op':>8} {'vs (a)':>8} {'location Ir/op':>15}")
    for mode, v in per_op.items():
        print(f"{CG_MODES[mode]:40} {v:8.0f} {v / a:8.3f} {v - a:15.0f}")
    if "c" in per_op:
        c = per_op["c"]
        print(f"target (c) <= 1.15 x (a): {c / a:.3f} {'met' if c <= 1.15 * a else 'NOT met'}")
        if "b" in per_op:
            b = per_op["b"]
            print(f"target (c-a) <= (b-a)/5: {(b - a) / max(c - a, 1):.1f}x less "
                  f"{'(met)' if c - a <= (b - a) / 5 else '(NOT met)'}")
    return {CG_MODES[mode]: v for mode, v in per_op.items()}


# --- scenario 5: the cold path, a new Context per kernel against one Context ----------------

COLD_LIMIT = 10  # MLIR's default frame limit, passed explicitly (iree 3.9 needs max_depth)
COLD_LEVELS = 6  # nested helper functions of the kernel (each calls the next twice)
COLD_MODES = {"a": "(a) Location.unknown()", "b": "(b) MLIR loc_tracebacks()",
              "c": "(c) MLIR's switch served by callsite (accelerate)",
              "p": "(p) the same, built through the bindings' Python API"}


def cold_kernel_source(ops: int) -> str:
    """A kernel of `ops` ops (rounded to a multiple of the helpers' calls): COLD_LEVELS nested
    helpers, each emitting its own arith ops on lines of its own and calling the next one
    twice, so that every op has a stack of its own (the deepest op 6 helpers down) and the ops
    of one helper share their outer frames."""
    calls = 2 ** COLD_LEVELS - 1  # helper invocations
    per = max(1, round(ops / calls))
    lines = []
    for level in range(COLD_LEVELS):
        lines.append(f"def level{level}(arith, x):")
        for i in range(per):
            op = ("addi", "muli", "subi", "andi", "ori", "xori")[i % 6]
            lines.append(f"    x = arith.{op}(x, x)")
            if i == per // 2 and level + 1 < COLD_LEVELS:
                lines.append(f"    x = level{level + 1}(arith, x)")
                lines.append(f"    x = level{level + 1}(arith, x)")
        lines.append("    return x")
    lines += ["def kernel(arith, i32):", "    return level0(arith, arith.constant(i32, 1))"]
    return "\n".join(lines) + "\n"


def cold_kernel_ops(ops: int) -> int:
    """The ops a kernel of `ops` requested ops builds (the constant included)."""
    return max(1, round(ops / (2 ** COLD_LEVELS - 1))) * (2 ** COLD_LEVELS - 1) + 1


def cold_kernel(ops: int):
    namespace: dict = {}
    exec(compile(cold_kernel_source(ops), f"<bench cold kernel {ops}>", "exec"), namespace)
    return namespace["kernel"]


@contextlib.contextmanager
def cold_mode(ir, mode: str):
    """(a) no switch, (b) MLIR's own switch, (c) the same switch with the bindings accelerated."""
    if mode == "a":
        yield
        return
    served = mode in ("c", "p")
    if served:
        callsite.mlir.accelerate(ir)
        # (p): callsite's fallback for bindings that do not export MLIR's C API, forced here.
        callsite.mlir.use(ir)._use_python_api(mode == "p")
    try:
        with ir.loc_tracebacks(max_depth=COLD_LIMIT):
            yield
    finally:
        if served:
            callsite.mlir.use(ir)._use_python_api(False)
            callsite.mlir.decelerate(ir)


def cold_build(ir, arith, kernel, context) -> "object":
    """One kernel built in `context` (a new one when None), under the driver's frames."""
    ctx = context if context is not None else ir.Context()
    with ctx, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            deep(DEPTH, kernel, arith, i32)
        return module


def cold_locations(module) -> list[str]:
    return [str(op.location) for op in module.body.operations]


def scenario_contexts(name, ir, arith, sizes, builds, repeats, mlir_why):
    """Builds per (mode, one Context or a new one per build), interleaved, process CPU time."""
    if name != "iree.compiler.ir":
        return None  # the cold path is measured on iree's bindings (their own Context class)
    print(f"\n## scenario 5: a kernel built in a new Context each time against one Context "
          f"({name}, MLIR's limit {COLD_LIMIT}, {builds} builds per sample, process CPU time, "
          f"min / median of {repeats})")
    modes = [m for m in COLD_MODES if not (m != "a" and mlir_why)]
    out: dict = {"limit": COLD_LIMIT, "builds": builds, "repeats": repeats, "sizes": {}}
    for ops in sizes:
        kernel = cold_kernel(ops)
        texts = {}
        one = {}
        for mode in modes:  # the warm-up builds; the locations compared
            one[mode] = ir.Context()
            with cold_mode(ir, mode):
                module = cold_build(ir, arith, kernel, one[mode])
                texts[mode] = cold_locations(module)
                cold_build(ir, arith, kernel, None)
        n_ops = len(texts["a"])
        assert n_ops == cold_kernel_ops(ops), (n_ops, ops)
        identical = None if "b" not in texts else \
            texts["b"] == texts["c"] and texts.get("p", texts["c"]) == texts["c"]
        if identical is False:
            raise SystemExit(f"scenario 5, {ops} ops: callsite's locations differ from MLIR's")
        samples: dict = {}
        for r in range(repeats):
            for mode in modes[r % len(modes):] + modes[:r % len(modes)]:
                for kind in ("one", "new"):
                    context = one[mode] if kind == "one" else None
                    with cold_mode(ir, mode):
                        if kind == "one":  # (p)'s switch of path drops every mode's caches
                            cold_build(ir, arith, kernel, context)
                        gc.collect()
                        gc.disable()
                        t = time.process_time()
                        for _ in range(builds):
                            cold_build(ir, arith, kernel, context)
                        dt = (time.process_time() - t) / builds
                        gc.enable()
                    samples.setdefault(f"{mode}/{kind}", []).append(dt)
        entry = {"ops": n_ops, "identical_to_mlir": identical, "samples_s": samples}
        for stat, pick in (("min", min), ("median", _median)):
            entry[stat] = {key: pick(v) for key, v in samples.items()}
        out["sizes"][str(n_ops)] = entry
        print(f"\n{n_ops} ops, locations identical to MLIR's: {identical}")
        print(f"{'mode':52} {'one Context':>12} {'new Context':>12}   (µs per build, min / median)")
        for mode in modes:
            cells = [f"{entry['min'][f'{mode}/{k}'] * 1e6:7.0f}/{entry['median'][f'{mode}/{k}'] * 1e6:.0f}"
                     for k in ("one", "new")]
            print(f"{COLD_MODES[mode]:52} {cells[0]:>12} {cells[1]:>12}")
        if "b" in modes:
            for kind in ("one", "new"):
                m = entry["median"]
                added_b = m[f"b/{kind}"] - m[f"a/{kind}"]
                added_c = m[f"c/{kind}"] - m[f"a/{kind}"]
                r = added_b / added_c if added_c > 0 else None
                print(f"{kind} Context: MLIR adds {added_b * 1e6:.0f} µs, callsite "
                      f"{added_c * 1e6:.0f} µs per build (medians): "
                      f"{'—' if r is None else f'{r:.1f}x'} less")
    return out


def _median(values):
    s = sorted(values)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def cold_child(binding, mode, sizes, builds):
    """Under valgrind: per kernel size and per Context kind, two warm-up builds, then `builds`
    more inside sys.call_tracing, the one function callgrind collects in (--toggle-collect)
    and dumps after (--dump-after): one part file per (size, kind), in order."""
    name, ir, arith, _ = next(b for b in installed_bindings() if b[0] == binding)
    with cold_mode(ir, mode):
        for ops in sizes:
            kernel = cold_kernel(ops)
            for kind in ("one", "new"):
                context = ir.Context() if kind == "one" else None

                def measured():
                    for _ in range(builds):
                        cold_build(ir, arith, kernel, context)
                    if kind == "new":
                        # callsite's cache holds the last Context's locations, and so the
                        # Context, until it sees another: dropped here, so that every mode
                        # frees the same number of Contexts inside the count.
                        callsite.mlir.clear_caches()

                cold_build(ir, arith, kernel, context)  # warm: this kernel's first build
                cold_build(ir, arith, kernel, ir.Context() if kind == "new" else context)
                gc.collect()
                gc.disable()
                sys.call_tracing(measured, ())
                gc.enable()


#: callgrind collects only inside this CPython function (sysmodule.c), which runs the measured
#: builds: start-up, imports and warm-up are not counted, with no second run to subtract.
TOGGLE = "sys_call_tracing"


def _part_total(path):
    with open(path) as f:
        for line in f:
            if line.startswith("totals:") or line.startswith("summary:"):
                return int(line.split()[1])
    raise SystemExit(f"{path}: no totals line")


def cold_instructions(binding, mlir_why, sizes, builds=10, keep=None):
    """Instructions per build, per mode, Context kind and size: one process per mode under
    callgrind (the modes' processes run side by side), each measured group dumped on its own."""
    import shutil
    import subprocess
    import tempfile
    if not shutil.which("valgrind"):
        print("\n(instruction counts skipped: valgrind not installed)")
        return {}
    print(f"\n## scenario 5 in instructions (valgrind --tool=callgrind, only {builds} builds "
          f"after two warm-up builds collected: --toggle-collect={TOGGLE}), {binding}, gc off")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0"}
    env.pop("CALLSITE_MLIR", None)
    folder = keep or tempfile.mkdtemp(prefix="callsite-cold-")
    modes = [m for m in COLD_MODES if not (m != "a" and mlir_why)]
    running = {}
    for mode in modes:
        running[mode] = subprocess.Popen(
            ["valgrind", "--tool=callgrind",
             f"--callgrind-out-file={os.path.join(folder, f'mlir-{mode}.out')}",
             "--collect-atstart=no", f"--toggle-collect={TOGGLE}", f"--dump-after={TOGGLE}",
             sys.executable, os.path.abspath(__file__), "--cold-child", binding, mode,
             ",".join(map(str, sizes)), str(builds)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    counts = {}
    for mode, process in running.items():
        _, err = process.communicate()
        if process.returncode:
            raise SystemExit(f"callgrind run of mode {mode} failed: {err.strip().splitlines()[-3:]}")
        part = 0
        for ops in sizes:
            for kind in ("one", "new"):
                part += 1
                path = os.path.join(folder, f"mlir-{mode}.out.{part}")
                counts[(mode, kind, ops)] = _part_total(path)
                if keep:  # named for bench/cold_report.py
                    os.replace(path, os.path.join(folder, f"mlir-{mode}-{kind}-{cold_kernel_ops(ops)}.out"))
    out: dict = {"builds": builds, "sizes": {}}
    for ops in sizes:
        per_build = {f"{m}/{k}": counts[(m, k, ops)] / builds for m in modes for k in ("one", "new")}
        out["sizes"][str(cold_kernel_ops(ops))] = per_build
        print(f"\n{cold_kernel_ops(ops)} ops: Ir per build")
        print(f"{'mode':52} {'one Context':>14} {'new Context':>14}")
        for mode in modes:
            print(f"{COLD_MODES[mode]:52} " + " ".join(
                f"{per_build[f'{mode}/{k}']:14,.0f}" for k in ("one", "new")))
        if "b" in modes:
            for kind in ("one", "new"):
                a, b, c = (per_build[f"{m}/{kind}"] for m in "abc")
                print(f"{kind} Context: MLIR adds {b - a:,.0f} Ir, callsite {c - a:,.0f} Ir per "
                      f"build: {(b - a) / max(c - a, 1):.1f}x fewer")
                if "p" in modes:
                    p = per_build[f"p/{kind}"]
                    print(f"{kind} Context, through the bindings' Python API: callsite "
                          f"{p - a:,.0f} Ir per build: {(b - a) / max(p - a, 1):.1f}x fewer")
    return out


def main():
    if len(sys.argv) == 6 and sys.argv[1] == "--cold-child":
        cold_child(sys.argv[2], sys.argv[3], [int(x) for x in sys.argv[4].split(",")],
                   int(sys.argv[5]))
        return 0
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
        return 0
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=5, quick="10x fewer ops, 3 repeats")
    parser.add_argument("--ops", type=_common.count, default=100_000)
    parser.add_argument("--long", type=_common.count, default=5_000)
    parser.add_argument("--no-callgrind", action="store_true", help="skip instruction counts")
    parser.add_argument("--callgrind-only", action="store_true", help="instruction counts only")
    parser.add_argument("--contexts", action="store_true",
                        help="scenario 5 only: a new Context per kernel against one Context "
                             "(wall and, unless --no-callgrind, instructions)")
    parser.add_argument("--kernel-ops", type=_common.counts, default=[60, 400],
                        help="scenario 5's kernel sizes (ops, comma-separated)")
    parser.add_argument("--builds", type=_common.count, default=10,
                        help="scenario 5's builds per sample")
    parser.add_argument("--keep-callgrind", metavar="DIR", type=_common.output_dir,
                        help="scenario 5: keep the callgrind files of the counted runs here "
                             "(created when missing)")
    args = parser.parse_args()
    for option, value in (("--ops", args.ops), ("--long", args.long)):
        if value < 10:
            parser.error(f"{option}: expected at least 10 ops, got {value}")
    if args.keep_callgrind and args.no_callgrind:
        parser.error("--keep-callgrind keeps the files of the instruction counts, which "
                     "--no-callgrind skips")
    if args.quick:
        args.ops, args.repeats = args.ops // 10, 3
    sizes = args.kernel_ops
    print(f"callsite {callsite.__version__}, backend {callsite.get_backend()} ({callsite.layout_name}), "
          f"Python {sys.version.split()[0]}")
    found = installed_bindings()
    if not found:
        print("no MLIR bindings installed: nothing to measure")
    results = {"python": sys.version.split()[0], "depth": stack_depth() + 1, "ops": args.ops,
               "long_kernel_ops": args.long, "repeats": args.repeats, "bindings": {}}
    for name, ir, arith, make_context in found:
        why = mlir_walk_refusal(ir, make_context)
        if why:
            print(f"\nMLIR's own loc_tracebacks() skipped for {name}: {why}")
        measured = results["bindings"][name] = {"mlir_walk_skipped": why}
        contexts = None
        if args.contexts or not args.callgrind_only:
            contexts = scenario_contexts(name, ir, arith, sizes, args.builds,
                                         max(args.repeats, 6), why)
            if contexts is not None:
                measured["contexts_s_per_build"] = contexts
        if contexts is not None and not args.no_callgrind:
            measured["contexts_ir_per_build"] = cold_instructions(
                name, why, sizes, args.builds, args.keep_callgrind)
        if args.contexts:
            continue
        if not args.callgrind_only:
            measured["ops_ns"] = scenario_ops(name, ir, arith, make_context, args.ops,
                                              args.repeats, why)
            measured["long_kernel_ns_per_tenth"] = scenario_long_kernel(
                name, ir, arith, make_context, args.long, args.repeats, why)
            measured["one_location_ns"] = scenario_one_location(name, ir, make_context, args.ops)
            measured["boundary_ns"] = scenario_boundary(name, ir, arith, make_context,
                                                        args.ops // 10, args.repeats, why)
            measured["code_references"] = leak_check(name, ir, make_context, why)
        if not args.no_callgrind:
            measured["instructions_per_op"] = callgrind_table(name, why)
    if args.json:
        _common.write_results(args.json, "mlir", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
