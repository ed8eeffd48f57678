"""bench_mlir — what a source location costs per MLIR op: callsite.mlir against MLIR's own
loc_tracebacks(), on every set of bindings installed (iree's, jaxlib's).

    python bench/bench_mlir.py [--ops 100000] [--repeats 5] [--quick] [--no-callgrind] [--json PATH]
    python bench/bench_mlir.py --contexts [--kernel-ops 60,400] [--builds 10] [--keep-callgrind DIR]

Scenarios: (1) ops built 20 frames deep with (a) Location.unknown(), (b) loc_tracebacks(),
(c) auto_locations, (d) loc=location(), (c') (c) through a Python wrapper of OpView.__init__, by
the clock and in instructions per op (callgrind, N1/N2 runs); (2) one 5k-op straight-line kernel,
ns per op along it; (3) one location: cache hit, new call site, empty cache; (4) the kernel
boundary: a 20-frame kernel under 200 framework frames; (5) the cold path, with --contexts and
alone (iree's bindings): a kernel of six nested helpers built in one Context and in a new one per
build with (a), (b) and (c) the same switch served by callsite: process CPU time and
instructions per build (only the measured builds collected). Wall times are the minimum of
interleaved repeats; a peer that is unavailable is skipped with the reason.
"""
from __future__ import annotations

import contextlib
import gc
import os
import statistics
import sys
import tempfile
import time

import callsite
import callsite.mlir
from callsite._cli.stacks import run_in_fresh_thread
from callsite._cli.tables import markdown_table
from callsite._cli.timing import clock, collector_off, minima, round_robin

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # for _common, _callgrind
import _callgrind  # noqa: E402
import _common  # noqa: E402

DEPTH = 14  # helper frames between the benchmark driver and the DSL function
LONG_KERNEL_OPS = 5_000  # scenario 2's kernel
A, B, C = "(a) Location.unknown()", "(b) MLIR loc_tracebacks()", "(c) callsite auto_locations"
D = "(d) callsite loc=location()"


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
        from jaxlib.mlir import ir as jir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext as ext
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
    with make_context() as ctx, ir.Location.unknown():
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


def print_page_table(table, name, field, measured):
    """The docs' table of a scenario (`table`: its function of the runs) for this binding's
    `measured` figures; scenario 1's (c)/(a) and (b−a)/(c−a) are the targets' ratios: at most
    1.15, at least 5."""
    print(_common.run_table(table, "mlir", {"bindings": {name: {field: measured}}}))


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


def op_modes(ir, mlir_why):
    """label: (the DSL function, the scope it builds in), or None when MLIR's walk is refused."""
    return {A: (dsl_kernel, contextlib.nullcontext),
            B: None if mlir_why else (dsl_kernel, ir.loc_tracebacks),
            C: (dsl_kernel, lambda: callsite.mlir.auto_locations(ir=ir)),
            D: (dsl_kernel_explicit, contextlib.nullcontext),
            "(c') Python wrapper of OpView.__init__": (dsl_kernel, lambda: python_wrapper(ir))}


def scenario_ops(name, ir, arith, make_context, n, repeats, mlir_why):
    print(f"\n## scenario 1: {n} ops (arith.constant + arith.addi), DSL function at stack depth "
          f"{stack_depth() + 1}, {name}, Python {sys.version.split()[0]}, ns per op")
    modes = op_modes(ir, mlir_why)
    with make_context(), ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)

        def build(label, count):
            kernel, scope = modes[label]
            module = ir.Module.create()
            gc.collect()
            with ir.InsertionPoint(module.body), scope():
                t = clock()
                deep(DEPTH, kernel, arith, i32, count)
                return clock() - t

        per_op = minima(round_robin(build, [m for m in modes if modes[m]], repeats=repeats,
                                     iterations=n))
    print_page_table(_common.page_tables().mlir_table, name, "ops_ns", per_op)
    return per_op


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
             "(b) MLIR": None if mlir_why else ir.loc_tracebacks,
             "(c) callsite, first build": lambda: callsite.mlir.auto_locations(ir=ir),
             "(c) callsite, rebuilt": lambda: callsite.mlir.auto_locations(ir=ir)}
    best = {}
    for _ in range(repeats):
        for label, scope in modes.items():
            if scope is None:
                continue
            if label != "(c) callsite, rebuilt":  # rebuilt: in the Context of the first build
                ctx = make_context()
            with ctx, ir.Location.unknown():
                i32 = ir.IntegerType.get_signless(32)
                module = ir.Module.create()
                marks = []
                with ir.InsertionPoint(module.body), scope():
                    deep(DEPTH, kernel, arith, i32, clock, marks)
                per_chunk = [(b - a) / chunk for a, b in zip(marks, marks[1:])]
                del module
            best[label] = [min(x, y) for x, y in zip(best.get(label, per_chunk), per_chunk)]
    print(f"\n## scenario 2: one straight-line kernel of {n_ops} ops, ns each mode adds to an op "
          f"in the first tenth of the function -> in its last ({name})")
    tables = _common.page_tables()
    print_page_table(lambda r: tables.mlir_cases_table(r, "long_kernel_ns_per_tenth",
                                                       tables.long_kernel_added),
                     name, "long_kernel_ns_per_tenth", best)
    return best


# --- scenario 3: one location ------------------------------------------------------------

def call_n_times(fn, n):
    for _ in range(n):
        fn()


def scenario_one_location(name, ir, make_context, n):
    print(f"\n## scenario 3: one location at stack depth {stack_depth() + 1}, ns per call ({name})")
    src = ["def sites(location):"] + ["    location()" for _ in range(2000)]
    ns = {}
    exec(compile("\n".join(src) + "\n", "<bench call sites>", "exec"), ns)
    location = callsite.mlir.location

    def warm_callers():
        callsite.mlir.clear_caches()
        deep(DEPTH, location)  # the callers' frames and chains cached, the call sites not

    # label: (before each sample, the function run DEPTH frames deep and its arguments, calls)
    cases = {"location(), cache hit": (None, call_n_times, (location, n), n),
             "location(), new call site (callers cached)": (
                 warm_callers, lambda: ns["sites"](location), (), 2000),
             "callsite.capture() (no location)": (None, call_n_times, (callsite.capture, n), n),
             "location(), empty cache (every level misses)": (
                 callsite.mlir.clear_caches, location, (), 1)}

    def per_call(label, _):
        before, fn, args, calls = cases[label]
        if before:
            before()
        t = clock()
        deep(DEPTH, fn, *args)
        return (clock() - t) / calls

    with make_context(), ir.Location.unknown():
        rows = minima(round_robin(per_call, list(cases)[:3], repeats=5))
        rows |= minima(round_robin(per_call, list(cases)[3:], repeats=200))
        frames = [ir.Location.name(f"f{i}", childLoc=ir.Location.file("bench.py", i, 4, i, 20))
                  for i in range(10)]
        t = clock()
        for _ in range(2000):
            ir.Location.callsite(frames[0], frames[1:])
        rows["MLIR API only: Location.callsite over 10 cached NameLocs"] = (clock() - t) / 2000
    print_page_table(lambda r: _common.page_tables().mlir_cases_table(r, "one_location_ns"),
                     name, "one_location_ns", rows)
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
    """fn() run as the only frame of a new thread; its result."""
    return run_in_fresh_thread(lambda result: result.set(fn()))


def scenario_boundary(name, ir, arith, make_context, n, repeats, mlir_why, kernel_depth=20,
                      program_depth=200):
    """A location in a kernel of `kernel_depth` frames under `program_depth` frames of framework
    should cost what it costs at depth `kernel_depth` alone, and far less than MLIR's walk with
    a limit of 40."""
    print(f"\n## scenario 4: kernel boundary, a kernel of {kernel_depth} frames under "
          f"{program_depth} framework frames ({name}), ns per call or op")
    flt = callsite.Filter()
    flt.limit = kernel_depth  # the whole chain is kept: every case renders the same length
    location = callsite.mlir.location

    def locations(count):
        for _ in range(count):
            location(flt)

    def ops(count):
        for _ in range(count):
            arith.ConstantOp(i32, 1)

    def timed(work, below, levels, scope):
        with scope():
            t = clock()
            deep(below, bounded_kernel, work, n, levels)
            return clock() - t

    # (1) callsite.mlir.location() per call at the kernel's top (cache hits), each case in a
    # thread of its own so that "alone" is a stack of exactly kernel_depth frames.
    alone = max(1, kernel_depth - in_thread(lambda: len(callsite.capture()) - 1))
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
            None if mlir_why else lambda: ir.loc_tracebacks(max_depth=40)),
    }
    with make_context() as ctx, ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)

        def run(label, _):
            if label in calls:
                def in_context():
                    with ctx, ir.Location.unknown(ctx):
                        return timed(*calls[label])
                return in_thread(in_context)
            module = ir.Module.create()
            gc.collect()
            with ir.InsertionPoint(module.body):
                return timed(ops, program_depth, kernel_depth, under[label])

        ns = minima(round_robin(run, [*calls, *(u for u in under if under[u])],
                                 repeats=repeats, iterations=n))
    print_page_table(lambda r: _common.page_tables().mlir_cases_table(r, "boundary_ns"),
                     name, "boundary_ns", ns)
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
            print(f"{label}: skipped ({mlir_why})")
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
        print(f"{label}: refcount growth: build {grown[0]:+d}, loop {grown[1]:+d} "
              f"({grown[0] / n:.2f} per op)")
        growth[label] = {"build": grown[0], "loop": grown[1], "ops": n}
    return growth


# --- scenario 1 in instructions (callgrind): deterministic on a noisy machine ---------------

def child(binding, label, n):
    """Builds n ops (its command line's text) in one mode, run under callgrind by
    callgrind_table."""
    name, ir, arith, make_context = next(b for b in installed_bindings() if b[0] == binding)
    kernel, scope = op_modes(ir, None)[label]
    with make_context(), ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module = ir.Module.create()
        with ir.InsertionPoint(module.body), scope():
            deep(DEPTH, kernel, arith, i32, 200)  # warm: caches, specialisation
            with collector_off():  # a collection in one run and not the other is noise here
                deep(DEPTH, kernel, arith, i32, int(n))


def callgrind_table(binding, mlir_why, small=2_000, large=12_000):
    print(f"\n## scenario 1 in instructions (valgrind --tool=callgrind), {binding}: "
          f"Ir per op = (Ir({large} ops) - Ir({small} ops)) / {large - small}, gc disabled")
    per_op = {}
    for label in (A, C, D) if mlir_why else (A, B, C, D):
        argv = [sys.executable, __file__, "--child", binding, label]
        try:
            per_op[label] = _callgrind.per_iteration(lambda n: [*argv, str(n)], small, large)
        except _callgrind.CallgrindError as e:
            print(f"{label}: {e}")
    if A not in per_op or C not in per_op:
        return {}
    print_page_table(_common.page_tables().mlir_instructions_table, binding,
                     "instructions_per_op", per_op)
    return per_op


# --- scenario 5: the cold path, a new Context per kernel against one Context ----------------

COLD_LIMIT = 10  # MLIR's default frame limit, passed explicitly (iree 3.9 needs max_depth)
COLD_LEVELS = 6  # nested helper functions of the kernel (each calls the next twice)
COLD_MODES = {"a": "(a) Location.unknown()", "b": "(b) MLIR loc_tracebacks()",
              "c": "(c) MLIR's switch served by callsite (accelerate)",
              "p": "(p) the same, built through the bindings' Python API"}
KINDS = ("one", "new")  # one Context for every build, a new Context per build


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
    served = mode in ("c", "p")
    if served:
        callsite.mlir.accelerate(ir)
        # (p): callsite's fallback for bindings that do not export MLIR's C API, forced here.
        callsite.mlir.use(ir)._use_python_api(mode == "p")
    try:
        with (contextlib.nullcontext() if mode == "a" else
              ir.loc_tracebacks(max_depth=COLD_LIMIT)):
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


def print_cold(cells, modes):
    """The modes' table, cells by "mode/kind" (bench/cold_report.py compares them)."""
    print(markdown_table(["mode", "one Context", "new Context"],
                         [[COLD_MODES[m], *(cells[f"{m}/{k}"] for k in KINDS)] for m in modes]))


def scenario_contexts(name, ir, arith, sizes, builds, repeats, modes):
    """Builds per (mode, one Context or a new one per build), interleaved, process CPU time."""
    print(f"\n## scenario 5: a kernel built in a new Context each time against one Context "
          f"({name}, MLIR's limit {COLD_LIMIT}, {builds} builds per sample, process CPU time, "
          f"min / median of {repeats}, µs per build)")
    out: dict = {"limit": COLD_LIMIT, "builds": builds, "repeats": repeats, "sizes": {}}
    for ops in sizes:
        kernel = cold_kernel(ops)
        texts = {}
        one = {}
        for mode in modes:  # the warm-up builds; the locations compared
            one[mode] = ir.Context()
            with cold_mode(ir, mode):
                module = cold_build(ir, arith, kernel, one[mode])
                texts[mode] = [str(op.location) for op in module.body.operations]
                cold_build(ir, arith, kernel, None)
        n_ops = len(texts["a"])
        assert n_ops == cold_kernel_ops(ops), (n_ops, ops)
        identical = texts["b"] == texts["c"] == texts["p"] if "b" in texts else None
        if identical is False:
            raise SystemExit(f"scenario 5, {ops} ops: callsite's locations differ from MLIR's")
        samples: dict = {}
        for r in range(repeats):
            for mode in modes[r % len(modes):] + modes[:r % len(modes)]:
                for kind in KINDS:
                    context = one[mode] if kind == "one" else None
                    with cold_mode(ir, mode):
                        if kind == "one":  # (p)'s switch of path drops every mode's caches
                            cold_build(ir, arith, kernel, context)
                        with collector_off():
                            t = time.process_time()
                            for _ in range(builds):
                                cold_build(ir, arith, kernel, context)
                            dt = (time.process_time() - t) / builds
                    samples.setdefault(f"{mode}/{kind}", []).append(dt)
        entry = {"ops": n_ops, "identical_to_mlir": identical, "samples_s": samples}
        for stat, pick in (("min", min), ("median", statistics.median)):
            entry[stat] = {key: pick(v) for key, v in samples.items()}
        out["sizes"][str(n_ops)] = entry
        print(f"\n{n_ops} ops, locations identical to MLIR's: {identical}")
        print_cold({k: f"{entry['min'][k] * 1e6:.0f}/{entry['median'][k] * 1e6:.0f}"
                    for k in samples}, modes)
    return out


def cold_child(binding, mode, sizes, builds):
    """Under callgrind (the arguments as its command line spells them): per kernel size and per
    Context kind, two warm-up builds, then `builds` more inside sys.call_tracing, the one
    function callgrind collects in and dumps after: one part file per (size, kind), in order."""
    name, ir, arith, _ = next(b for b in installed_bindings() if b[0] == binding)
    with cold_mode(ir, mode):
        for ops in _common.counts(sizes):
            kernel = cold_kernel(ops)
            for kind in KINDS:
                context = ir.Context() if kind == "one" else None

                def measured():
                    for _ in range(int(builds)):
                        cold_build(ir, arith, kernel, context)
                    if kind == "new":
                        # callsite's cache holds the last Context's locations, and so the
                        # Context, until it sees another: dropped here, so that every mode
                        # frees the same number of Contexts inside the count.
                        callsite.mlir.clear_caches()

                for _ in range(2):  # warm: this kernel's first builds (None: a new Context)
                    cold_build(ir, arith, kernel, context)
                with collector_off():
                    sys.call_tracing(measured, ())


def cold_instructions(binding, modes, sizes, builds, keep):
    """Instructions per build, per mode, Context kind and size: one process per mode under
    callgrind (the modes' processes side by side), each measured group a part file of its own."""
    print(f"\n## scenario 5 in instructions (callgrind, only {builds} builds after two warm-up "
          f"builds collected: --toggle-collect={_callgrind.TOGGLE}), {binding}, gc off, Ir per "
          f"build")
    env = {k: v for k, v in os.environ.items() if k != "CALLSITE_MLIR"}  # each mode its own switch
    folder = keep or tempfile.mkdtemp(prefix="callsite-cold-")
    out_of = {mode: os.path.join(folder, f"mlir-{mode}.out") for mode in modes}
    running = {mode: _callgrind.start(
        [sys.executable, __file__, "--cold-child", binding, mode, ",".join(map(str, sizes)),
         str(builds)], env=env, out=out_of[mode], toggle=_callgrind.TOGGLE, dump_after=True)
        for mode in modes}
    groups = [(str(cold_kernel_ops(ops)), kind) for ops in sizes for kind in KINDS]
    per_build: dict = {ops: {} for ops, _ in groups}
    for mode, process in running.items():
        _callgrind.wait(process, f"mode {mode}")
        totals = _callgrind.part_totals(out_of[mode], len(groups))
        for part, ((ops, kind), total) in enumerate(zip(groups, totals), 1):
            per_build[ops][f"{mode}/{kind}"] = total / builds
            if keep:  # named for bench/cold_report.py
                os.replace(f"{out_of[mode]}.{part}",
                           os.path.join(folder, f"mlir-{mode}-{kind}-{ops}.out"))
    for ops, values in per_build.items():
        print(f"\n{ops} ops")
        print_cold({k: f"{v:,.0f}" for k, v in values.items()}, modes)
    return {"builds": builds, "sizes": per_build}


def main():
    children = {"--child": child, "--cold-child": cold_child}  # the processes callgrind counts
    if len(sys.argv) > 1 and sys.argv[1] in children:
        children[sys.argv[1]](*sys.argv[2:])
        return 0
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=5, quick="10x fewer ops, 3 repeats")
    parser.add_argument("--ops", type=_common.count, default=100_000)
    parser.add_argument("--no-callgrind", action="store_true", help="skip instruction counts")
    parser.add_argument("--contexts", action="store_true", help="scenario 5 alone (the cold path)")
    parser.add_argument("--kernel-ops", type=_common.counts, default=[60, 400],
                        help="scenario 5's kernel sizes (ops, comma-separated)")
    parser.add_argument("--builds", type=_common.count, default=10,
                        help="scenario 5's builds per sample")
    parser.add_argument("--keep-callgrind", metavar="DIR", type=_common.output_dir,
                        help="scenario 5: keep the callgrind files of the counted runs here "
                             "(created when missing)")
    args = parser.parse_args()
    if args.ops < 10:
        parser.error(f"--ops: expected at least 10 ops, got {args.ops}")
    if args.keep_callgrind and args.no_callgrind:
        parser.error("--keep-callgrind keeps the files of the instruction counts, which "
                     "--no-callgrind skips")
    if args.quick:
        args.ops, args.repeats = args.ops // 10, 3
    counting = not args.no_callgrind
    if counting and (missing := _callgrind.missing()):
        print(f"(instruction counts skipped: {missing})")
        counting = False
    print(f"callsite {callsite.__version__}, backend {callsite.get_backend()} "
          f"({callsite.layout_name}), Python {sys.version.split()[0]}")
    found = installed_bindings()
    if not found:
        print("no MLIR bindings installed: nothing to measure")
    results = {"python": sys.version.split()[0], "depth": stack_depth() + 1, "ops": args.ops,
               "long_kernel_ops": LONG_KERNEL_OPS, "repeats": args.repeats, "bindings": {}}
    for name, ir, arith, make_context in found:
        why = mlir_walk_refusal(ir, make_context)
        if why:
            print(f"\nMLIR's own loc_tracebacks() skipped for {name}: {why}")
        measured = results["bindings"][name] = {"mlir_walk_skipped": why}
        if args.contexts:
            if name == "iree.compiler.ir":  # on iree's bindings (their own Context class)
                modes = ["a"] if why else list(COLD_MODES)  # (a) alone: no walk to compare
                measured["contexts_s_per_build"] = scenario_contexts(
                    name, ir, arith, args.kernel_ops, args.builds, max(args.repeats, 6), modes)
                if counting:
                    measured["contexts_ir_per_build"] = cold_instructions(
                        name, modes, args.kernel_ops, args.builds, args.keep_callgrind)
            continue
        measured["ops_ns"] = scenario_ops(name, ir, arith, make_context, args.ops, args.repeats,
                                          why)
        measured["long_kernel_ns_per_tenth"] = scenario_long_kernel(
            name, ir, arith, make_context, LONG_KERNEL_OPS, args.repeats, why)
        measured["one_location_ns"] = scenario_one_location(name, ir, make_context, args.ops)
        measured["boundary_ns"] = scenario_boundary(name, ir, arith, make_context,
                                                    args.ops // 10, args.repeats, why)
        measured["code_references"] = leak_check(name, ir, make_context, why)
        if counting:
            measured["instructions_per_op"] = callgrind_table(name, why)
    if args.json:
        _common.write_results(args.json, "mlir", results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
