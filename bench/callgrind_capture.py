# bench/callgrind_capture.py — instructions per capture (callgrind), per function, both backends.
"""Counts instructions of capture with valgrind's callgrind, cancelling start-up exactly.

Run through the wrapper, which builds an unstripped copy of the Release build first:
    bench/callgrind_capture.sh [3.11 ...] [-- options of this script]
or directly, with a callsite build that has symbols on PYTHONPATH:
    PYTHONPATH=build/bench-cg-311/pkg python bench/callgrind_capture.py [--peers]

Method: every configuration runs twice under callgrind, with N1 and N2 loop iterations at
exactly `depth` frames (a fresh thread, real recursion). Everything that is not the loop —
interpreter start-up, imports, the harness — is identical in both runs, so
(Ir(N2) − Ir(N1)) / (N2 − N1) is the cost of one iteration, and the same difference taken per
function (callgrind_annotate, inclusive and self) says where that iteration's instructions
go. Per extra frame: the same per-iteration cost at two depths, divided by the difference.
PYTHONHASHSEED is fixed so both runs execute the same dict probes. A third run per callsite
backend toggles collection on capture_py only (--toggle-collect), leaving a profile of just
the capture path for callgrind_annotate --auto=yes / kcachegrind.
"""
from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time

from callsite._cli.tables import markdown_table

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # for _common (bench only)

CAPTURE_FN = "callsite::detail::capture_py"
DEALLOC_FN = "traceback_dealloc"

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
    from callsite._cli.timing import clock, compile_statement

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


# --- driver ---------------------------------------------------------------------------------

def callgrind_child(out_file: str, script: str, child_args: list[str],
                    toggle: str | None = None) -> int:
    """Runs `python script --child *child_args` under callgrind (uncompressed output, fixed
    hash seed) and returns its total instructions; used by the other callgrind benchmarks."""
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out_file}",
           "--trace-children=no", "--compress-strings=no", "--compress-pos=no"]
    if toggle:
        cmd += ["--collect-atstart=no", f"--toggle-collect={toggle}*"]
    cmd += [sys.executable, os.path.abspath(script), "--child", *child_args]
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{proc.stderr[-3000:]}")
    return total_ir(out_file)


def run_callgrind(out_file: str, method: str, depth: int, n: int, toggle: str | None) -> None:
    callgrind_child(out_file, __file__, [method, str(depth), str(n)], toggle)


def total_ir(out_file: str) -> int:
    with open(out_file) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise RuntimeError(f"no totals in {out_file}")


class Profile:
    """Self cost per function and inclusive cost per call edge, read from a callgrind.out
    written with --compress-strings=no --compress-pos=no (format: valgrind docs, "Callgrind
    Format Specification"). Functions are keyed by name across objects."""

    def __init__(self, out_file: str):
        self.self_cost: dict[str, int] = {}
        self.edges: dict[tuple[str, str], int] = {}
        fn = cfn = pending = None
        with open(out_file) as f:
            for line in f:
                c = line[:1]
                if c.isdigit() or c in "+-*":
                    parts = line.split()
                    ir = int(parts[1]) if len(parts) > 1 else 0
                    if pending is not None:  # the cost line after calls= is the call's inclusive cost
                        key = (fn, pending)
                        self.edges[key] = self.edges.get(key, 0) + ir
                        pending = None
                    else:
                        self.self_cost[fn] = self.self_cost.get(fn, 0) + ir
                elif line.startswith("fn="):
                    fn = line[3:].rstrip("\n")
                elif line.startswith("cfn="):
                    cfn = line[4:].rstrip("\n")
                elif line.startswith("calls="):
                    pending = cfn

    def inclusive(self) -> dict[str, int]:
        out = dict(self.self_cost)
        for (caller, callee), ir in self.edges.items():
            if caller != callee:  # direct self-recursion would count twice
                out[caller] = out.get(caller, 0) + ir
        return out


def delta(a: dict, b: dict, n: int) -> dict:
    return {k: (b.get(k, 0) - a.get(k, 0)) / n for k in set(a) | set(b)}


def find(fns: dict[str, float], needle: str) -> float:
    return sum(v for k, v in fns.items() if needle in k and "'" not in k)


class Config:
    """One (method, depth): two runs, per-iteration totals and per-function deltas."""

    def __init__(self, outdir, method, depth, n1, n2):
        self.method, self.depth, self.n1, self.n2 = method, depth, n1, n2
        self.files = [os.path.join(outdir, f"{method}-d{depth}-n{n}.out") for n in (n1, n2)]

    def run(self):
        for f, n in zip(self.files, (self.n1, self.n2)):
            run_callgrind(f, self.method, self.depth, n, None)
        dn = self.n2 - self.n1
        t1, t2 = (total_ir(f) for f in self.files)
        self.per_iter = (t2 - t1) / dn
        p1, p2 = (Profile(f) for f in self.files)
        self.self_cost = delta(p1.self_cost, p2.self_cost, dn)
        self.inclusive = delta(p1.inclusive(), p2.inclusive(), dn)
        self.edges = delta(p1.edges, p2.edges, dn)
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


def main(argv=None) -> int:
    import _common

    ap = _common.parser(__doc__, json=False)
    ap.add_argument("--child", nargs=3, metavar=("METHOD", "DEPTH", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--n1", type=_common.count, default=1000)
    ap.add_argument("--n2", type=_common.count, default=11000)
    ap.add_argument("--depths", type=_common.counts, default=[20, 50],
                    help="first = main depth; per-frame from all")
    ap.add_argument("--peers", action="store_true",
                    help="also count the sys._getframe loop, jaxlib and the bare loop")
    ap.add_argument("--top", type=int, default=14)
    ap.add_argument("--out", default=None, type=_common.output_dir,
                    help="directory for callgrind.out files (created when missing)")
    args = ap.parse_args(argv)
    if args.child:
        return child(args.child[0], int(args.child[1]), int(args.child[2]))

    if not shutil.which("valgrind"):
        print("valgrind not found: apt-get install valgrind", file=sys.stderr)
        return 1
    import callsite
    v = sys.version_info
    outdir = args.out or os.path.join(HERE, "..", "build", "callgrind", f"py{v.major}{v.minor}")
    os.makedirs(outdir, exist_ok=True)
    depths = args.depths
    print(f"## callgrind: instructions per capture — Python {v.major}.{v.minor}.{v.micro}\n")
    print(f"callsite from {os.path.dirname(callsite.__file__)} (layout {callsite.layout_name}); "
          f"N1={args.n1}, N2={args.n2}; out files in {os.path.abspath(outdir)}\n")

    methods = [m for m in CALLSITE_METHODS
               if not (m == "callsite-internal" and callsite.internal_backend_refusal())]
    if "callsite-internal" not in methods:
        print(f"callsite-internal skipped: {callsite.internal_backend_refusal()}")
    if args.peers:
        for m in PEER_METHODS:
            if m == "jaxlib":
                try:
                    from jaxlib import _jax  # noqa: F401
                except ImportError as e:
                    print(f"jaxlib skipped: {e}")
                    continue
            methods.append(m)

    t0 = time.time()
    configs: dict[tuple[str, int], Config] = {}
    for m in methods:
        for d in (depths if m in CALLSITE_METHODS else depths[:1]):
            configs[m, d] = Config(outdir, m, d, args.n1, args.n2).run()
            print(f"  ran {m} depth {d} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)

    # Summary.
    d0 = depths[0]
    rows = []
    for m in methods:
        c = configs[m, d0]
        cap = find(c.inclusive, CAPTURE_FN) if m in CALLSITE_METHODS else None
        dealloc = find(c.inclusive, DEALLOC_FN) if m in CALLSITE_METHODS else None
        row = [m, f"{c.per_iter:,.0f}", "—" if cap is None else f"{cap:,.0f}",
               "—" if dealloc is None else f"{dealloc:,.0f}"]
        if m in CALLSITE_METHODS and len(depths) > 1:
            c1 = configs[m, depths[-1]]
            dd = depths[-1] - d0
            row += [f"{(find(c1.inclusive, CAPTURE_FN) - cap) / dd:.1f}",
                    f"{(find(c1.inclusive, DEALLOC_FN) - dealloc) / dd:.1f}",
                    f"{(c1.per_iter - c.per_iter) / dd:.1f}"]
        else:
            row += ["—", "—", "—"]
        rows.append(row)
    print(f"### Ir per loop iteration at depth {d0} (per extra frame: depth {depths[0]}→"
          f"{depths[-1]})\n")
    print(markdown_table(("method", "whole iteration", "capture_py", "traceback_dealloc",
                 "capture_py /frame", "traceback_dealloc /frame", "whole /frame"), rows))

    for m in methods:
        if m not in CALLSITE_METHODS:
            continue
        c = configs[m, d0]
        print(f"\n### {m}, depth {d0}: where one iteration's instructions go\n")
        print("call tree (inclusive Ir per iteration):\n```")
        for line in c.tree(CAPTURE_FN) + c.tree(DEALLOC_FN):
            print(line)
        print("```\n")
        selfs = sorted(((v, k) for k, v in c.self_cost.items() if v >= 0.5), reverse=True)
        print(markdown_table(("Ir self", "function (whole iteration, interpreter included)"),
                    [(f"{v:,.1f}", short(k)) for v, k in selfs[: args.top]]))
        if len(depths) > 1:
            c1 = configs[m, depths[-1]]
            dd = depths[-1] - d0
            grow = sorted((((c1.self_cost.get(k, 0) - c.self_cost.get(k, 0)) / dd, k)
                           for k in set(c.self_cost) | set(c1.self_cost)), reverse=True)
            print(f"\nper extra frame (self Ir, depth {d0}→{depths[-1]}):")
            for v, k in grow[:8]:
                if v >= 0.05:
                    print(f"  {v:6.2f}  {short(k)}")

    # Toggle runs: just the capture path, for callgrind_annotate --auto=yes / kcachegrind.
    print()
    for m in (x for x in methods if x in CALLSITE_METHODS):
        f = os.path.join(outdir, f"{m}-d{d0}-n{args.n2}-capture_py-only.out")
        run_callgrind(f, m, d0, args.n2, CAPTURE_FN)
        print(f"{m}: --toggle-collect={CAPTURE_FN}*: {total_ir(f) / args.n2:,.1f} Ir per capture "
              f"(includes the {d0}-frame sanity probe) → {os.path.relpath(f)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
