# bench/callgrind_capture.py — instructions per capture (callgrind), per function, both backends;
# with --mlir, per MLIR location.
"""Instructions per loop iteration at exactly `depth` frames (a fresh thread, real recursion),
counted by bench/_callgrind.py's per_iteration: each configuration runs twice, with N1 and N2
iterations, so start-up and imports cancel; the same difference taken per function (inclusive
and self) says where an iteration's instructions go.

    bench/callgrind_capture.sh [3.11 ...] [-- options]    # builds build/bench-cg-3XY first
    PYTHONPATH=build/bench-cg-311/pkg python bench/callgrind_capture.py [--peers]
    PYTHONPATH=build/bench-cg-311/pkg python bench/callgrind_capture.py --mlir  # iree.compiler

Capture: both callsite backends at every depth (per extra frame from the first to the last),
--peers adds the sys._getframe loop, jaxlib and the bare loop; a third run per backend collects
only inside capture_py, a profile of the capture path for callgrind_annotate --auto=yes.
--mlir: `callsite.mlir.location()` hitting the cache (location-hit), `arith.constant` under
`auto_locations()` (op-auto) and under `ir.Location.unknown()` only (op-unknown); op-auto −
op-unknown is what the location costs an op. The cyclic collector is off there: its passes
depend on the whole heap, so the two runs would collect a different number of times.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from contextlib import nullcontext

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _common and _callgrind
import _callgrind  # noqa: E402
import _common  # noqa: E402
from callsite._cli.tables import markdown_table  # noqa: E402

CAPTURE_FN = "callsite::detail::capture_py"
DEALLOC_FN = "traceback_dealloc"
UNCOMPRESSED = ("--compress-strings=no", "--compress-pos=no")  # names written out, for Profile

# name -> (statement leaving its result in _r, needs, callsite backend or None)
METHODS = {
    "callsite-internal": ("_r = capture()", "callsite", "internal"),
    "callsite-public": ("_r = capture()", "callsite", "public"),
    "getframe-loop": ("""
f = _getframe()
_r = []
while f is not None:
    _r.append((f.f_code, f.f_lasti))
    f = f.f_back
""", "stdlib", None),
    "jaxlib": ("_r = get_traceback()", "jax", None),
    "loop-overhead": ("_r = is_finalizing()", "stdlib", None),
}
CALLSITE_METHODS = ("callsite-internal", "callsite-public")
PEER_METHODS = ("getframe-loop", "jaxlib", "loop-overhead")
MLIR_CONFIGS = ("location-hit", "op-auto", "op-unknown")


# --- child: the measured program ------------------------------------------------------------

def namespace(needs: str) -> dict:
    if needs == "callsite":
        import callsite
        return {"capture": callsite.capture}
    if needs == "jax":
        from jaxlib import _jax
        if hasattr(_jax, "set_tracebacks_enabled"):
            _jax.set_tracebacks_enabled(True)
        return {"get_traceback": _jax.Traceback.get_traceback}
    return {"_getframe": sys._getframe, "is_finalizing": sys.is_finalizing}


def child(method: str, depth: int, n: int) -> int:
    from callsite._cli.stacks import at_depth_in_fresh_thread
    from callsite._cli.timing import clock, collector_off, compile_statement

    if method in MLIR_CONFIGS:
        loop = mlir_loop(method)  # imports and the Context made with the collector on, as usual
        with collector_off():
            at_depth_in_fresh_thread(depth, loop, n, None)
        return 0
    stmt, needs, backend = METHODS[method]
    ns = namespace(needs)
    if backend:
        import callsite
        callsite.set_backend(backend)
        if callsite.get_backend() != backend:
            raise SystemExit(f"backend {backend} unavailable: {callsite.internal_backend_refusal()}")
    fns = compile_statement(stmt, ns, method)
    if needs == "callsite":  # sanity: the stack really has `depth` frames
        got = len(at_depth_in_fresh_thread(depth, fns["probe"]))
        if got != depth:
            raise SystemExit(f"expected {depth} frames, captured {got}")
    at_depth_in_fresh_thread(depth, fns["loop"], n, clock)
    return 0


def mlir_loop(config: str):
    """loop(n, clock): n lookups, or n ops built, in one Context (the first fills the cache)."""
    import callsite.mlir
    from iree.compiler import ir
    from iree.compiler.dialects import arith

    ctx = ir.Context()

    def loop(n, clock):
        if config == "location-hit":
            location = callsite.mlir.location
            with ctx:
                for _ in range(n):
                    location()
            return 0
        locations = callsite.mlir.auto_locations if config == "op-auto" else nullcontext
        with ctx, ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            attr = ir.IntegerAttr.get(i32, 1)
            module = ir.Module.create()
            with ir.InsertionPoint(module.body), locations():
                for _ in range(n):
                    arith.ConstantOp(i32, attr)
        return 0
    return loop


# --- driver ---------------------------------------------------------------------------------

def child_argv(method: str, depth: int):
    return lambda n: [sys.executable, os.path.abspath(__file__), "--child", method, str(depth),
                      str(n)]


class Profile:
    """Self cost per function and inclusive cost per call edge, read from a callgrind.out
    written with --compress-strings=no --compress-pos=no (format: valgrind docs, "Callgrind
    Format Specification"). Functions are keyed by name across objects."""

    def __init__(self, out_file: str):
        self.self_cost: dict[str, int] = defaultdict(int)
        self.edges: dict[tuple[str, str], int] = defaultdict(int)
        fn = cfn = pending = None
        with open(out_file) as f:
            for line in f:
                c = line[:1]
                if c.isdigit() or c in "+-*":
                    parts = line.split()
                    ir = int(parts[1]) if len(parts) > 1 else 0
                    if pending is not None:  # the cost line after calls= is the call's inclusive cost
                        self.edges[fn, pending] += ir
                        pending = None
                    else:
                        self.self_cost[fn] += ir
                elif line.startswith("fn="):
                    fn = line[3:].rstrip("\n")
                elif line.startswith("cfn="):
                    cfn = line[4:].rstrip("\n")
                elif line.startswith("calls="):
                    pending = cfn

    def inclusive(self) -> dict[str, int]:
        out = defaultdict(int, self.self_cost)
        for (caller, callee), ir in self.edges.items():
            if caller != callee:  # direct self-recursion would count twice
                out[caller] += ir
        return out


def delta(a: dict, b: dict, n: int) -> dict:
    return {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}


def find(fns: dict[str, float], needle: str) -> float:
    return sum(v for k, v in fns.items() if needle in k and "'" not in k)


class Config:
    """One (method, depth): two runs, per-iteration totals and per-function deltas."""

    def __init__(self, outdir, method, depth, n1, n2):
        self.method, self.depth, self.n1, self.n2 = method, depth, n1, n2
        self.file_of = lambda n: os.path.join(outdir, f"{method}-d{depth}-n{n}.out")

    def run(self):
        started, dn = time.time(), self.n2 - self.n1
        self.per_iter = _callgrind.per_iteration(child_argv(self.method, self.depth), self.n1,
                                                 self.n2, out_of=self.file_of, extra=UNCOMPRESSED)
        p1, p2 = (Profile(self.file_of(n)) for n in (self.n1, self.n2))
        self.self_cost = delta(p1.self_cost, p2.self_cost, dn)
        self.inclusive = delta(p1.inclusive(), p2.inclusive(), dn)
        self.edges = delta(p1.edges, p2.edges, dn)
        print(f"  ran {self.method} depth {self.depth} ({time.time() - started:.0f} s)",
              file=sys.stderr, flush=True)
        return self

    def callees(self, caller: str) -> list[tuple[float, str]]:
        return sorted(((v, k[1]) for k, v in self.edges.items()
                       if k[0] == caller and k[1] != caller and v >= 0.05), reverse=True)

    def tree(self, root_needle: str, levels: int = 3) -> list[str]:
        """The call tree under the function matching root_needle: inclusive Ir per iteration."""
        roots = [k for k in self.inclusive if root_needle in k and "'" not in k]
        lines = []

        def walk(fn, depth, seen):
            for v, callee in self.callees(fn):
                lines.append(f"{'  ' * depth}{v:9.1f}  {short(callee, 90 - 2 * depth)}")
                if depth < levels and callee not in seen:
                    walk(callee, depth + 1, seen | {callee})
        for r in roots:
            lines.append(f"{self.inclusive[r]:9.1f}  {short(r)}   (self {self.self_cost.get(r, 0):.1f})")
            walk(r, 1, {r})
        return lines


def short(name: str, width: int = 78) -> str:
    name = name.replace("(anonymous namespace)::", "").replace("_object", "PyObject")
    return name if len(name) <= width else name[: width - 1] + "…"


def mlir_main(args) -> int:
    try:
        import iree.compiler.ir  # noqa: F401
    except ImportError as e:
        print(f"skipped: iree-base-compiler is not installed ({e})")
        return 0
    depth, (n1, n2) = args.depths[0], (args.n1 or 2000, args.n2 or 12000)
    print(f"Python {sys.version.split()[0]}, depth {depth}, "
          f"Ir per iteration = (Ir(n={n2}) - Ir(n={n1})) / {n2 - n1}\n")
    per = {config: Config(args.out, config, depth, n1, n2).run().per_iter
           for config in args.configs}
    if "op-auto" in per and "op-unknown" in per:
        per["op-auto − op-unknown (location per op)"] = per["op-auto"] - per["op-unknown"]
    print(markdown_table(("configuration", "Ir per iteration"),
                         [(config, f"{v:.1f}") for config, v in per.items()]))
    return 0


def main(argv=None) -> int:
    ap = _common.parser(__doc__, json=False)
    ap.add_argument("--child", nargs=3, metavar=("METHOD", "DEPTH", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--n1", type=_common.count, help="iterations of the first run "
                    "(default 1000, --mlir 2000)")
    ap.add_argument("--n2", type=_common.count, help="iterations of the second run "
                    "(default 11000, --mlir 12000)")
    ap.add_argument("--depths", type=_common.counts, help="first = main depth; per-frame from "
                    "all (default 20,50; --mlir: the first only, default 20)")
    ap.add_argument("--peers", action="store_true",
                    help="also count the sys._getframe loop, jaxlib and the bare loop")
    ap.add_argument("--mlir", action="store_true", help="count MLIR locations instead")
    ap.add_argument("--configs", type=_common.names(MLIR_CONFIGS), default=list(MLIR_CONFIGS),
                    help="--mlir: which configurations")
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--out", type=_common.output_dir, help="directory for callgrind.out files "
                    "(created when missing; default build/callgrind/py3XY)")
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], int(args.child[1]), int(args.child[2]))

    if why := _callgrind.missing():
        print(why, file=sys.stderr)
        return 1
    args.out = args.out or _common.output_dir(os.path.join(
        _common.REPO, "build", "callgrind", f"py{sys.version_info.major}{sys.version_info.minor}"))
    args.depths = args.depths or ([20] if args.mlir else [20, 50])
    if args.mlir:
        return mlir_main(args)
    return capture_main(args)


def capture_main(args) -> int:
    import callsite

    n1, n2, outdir, depths = args.n1 or 1000, args.n2 or 11000, args.out, args.depths
    d0, d1 = depths[0], depths[-1]
    print(f"## callgrind: instructions per capture — {_common.environment_line()}\n")
    print(f"callsite from {os.path.dirname(callsite.__file__)} (layout {callsite.layout_name}); "
          f"N1={n1}, N2={n2}; out files in {os.path.abspath(outdir)}\n")
    methods = list(CALLSITE_METHODS)
    if refusal := callsite.internal_backend_refusal():
        methods.remove("callsite-internal")
        print(f"callsite-internal skipped: {refusal}")
    if args.peers:
        methods += PEER_METHODS
        try:
            from jaxlib import _jax  # noqa: F401
        except ImportError as e:
            methods.remove("jaxlib")
            print(f"jaxlib skipped: {e}")

    configs = {(m, d): Config(outdir, m, d, n1, n2).run()
               for m in methods for d in (depths if m in CALLSITE_METHODS else depths[:1])}

    rows = []
    for m in methods:
        c, ours = configs[m, d0], m in CALLSITE_METHODS
        row = [m, f"{c.per_iter:,.0f}"] + [f"{find(c.inclusive, fn):,.0f}" if ours else "—"
                                           for fn in (CAPTURE_FN, DEALLOC_FN)]
        if ours and d1 != d0:  # per extra frame
            c1 = configs[m, d1]
            row += [f"{(find(c1.inclusive, fn) - find(c.inclusive, fn)) / (d1 - d0):.1f}"
                    for fn in (CAPTURE_FN, DEALLOC_FN)]
            row.append(f"{(c1.per_iter - c.per_iter) / (d1 - d0):.1f}")
        rows.append(row + ["—"] * (7 - len(row)))
    print(f"### Ir per loop iteration at depth {d0} (per extra frame: depth {d0}→{d1})\n")
    print(markdown_table(("method", "whole iteration", "capture_py", "traceback_dealloc",
                          "capture_py /frame", "traceback_dealloc /frame", "whole /frame"), rows))

    for m in (x for x in methods if x in CALLSITE_METHODS):
        c = configs[m, d0]
        print(f"\n### {m}, depth {d0}: where one iteration's instructions go\n")
        print("call tree (inclusive Ir per iteration):\n```")
        print("\n".join(c.tree(CAPTURE_FN) + c.tree(DEALLOC_FN)) + "\n```\n")
        selfs = sorted(((v, k) for k, v in c.self_cost.items() if v >= 0.5), reverse=True)
        print(markdown_table(("Ir self", "function (whole iteration, interpreter included)"),
                             [(f"{v:,.1f}", short(k)) for v, k in selfs[: args.top]]))
        if d1 != d0:
            grow = sorted(delta(c.self_cost, configs[m, d1].self_cost, d1 - d0).items(),
                          key=lambda kv: kv[1], reverse=True)
            print(f"\nper extra frame (self Ir, depth {d0}→{d1}):")
            print("\n".join(f"  {v:6.2f}  {short(k)}" for k, v in grow[:8] if v >= 0.05))

    # Toggle runs: just the capture path, for callgrind_annotate --auto=yes / kcachegrind.
    print()
    for m in (x for x in methods if x in CALLSITE_METHODS):
        f = os.path.join(outdir, f"{m}-d{d0}-n{n2}-capture_py-only.out")
        ir, _ = _callgrind.count(child_argv(m, d0)(n2), out=f, extra=UNCOMPRESSED,
                                 toggle=CAPTURE_FN + "*")
        print(f"{m}: --toggle-collect={CAPTURE_FN}*: {ir / n2:,.1f} Ir per capture "
              f"(includes the {d0}-frame sanity probe) → {os.path.relpath(f)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
