# bench/callgrind_capture.py — instructions per capture (callgrind), per function, both backends.
"""Instructions per loop iteration at exactly `depth` frames (a fresh thread, real recursion),
counted by bench/_callgrind.py's per_iteration: each configuration runs twice, with N1 and N2
iterations, so start-up and imports cancel; the same difference of callgrind_annotate's
inclusive counts gives the instructions inside capture_py and traceback_dealloc.

    bench/callgrind_capture.sh [3.11 ...] [-- options]    # builds build/bench-cg-3XY first
    PYTHONPATH=build/bench-cg-311/pkg python bench/callgrind_capture.py [--peers]

Both callsite backends at every depth (per extra frame from the first to the last), --peers
adds the sys._getframe loop, jaxlib and the bare loop; a third run per backend collects only
inside capture_py, a profile of the capture path for callgrind_annotate --auto=yes.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _common and _callgrind
import _callgrind  # noqa: E402
import _common  # noqa: E402
from bench_capture import CALLSITE, CALLSITE_INTERNAL, GETFRAME_LOOP, JAX, STDLIB  # noqa: E402
from callgrind_breakdown import annotate  # noqa: E402
from callsite._cli.tables import markdown_table  # noqa: E402

CAPTURE_FN = "callsite::detail::capture_py"
DEALLOC_FN = "traceback_dealloc"

# name -> (statement leaving its result in _r, bench_capture.py's peer whose names it needs,
# callsite backend or None)
METHODS = {
    "callsite-internal": ("_r = capture()", CALLSITE_INTERNAL, "internal"),
    "callsite-public": ("_r = capture()", CALLSITE, "public"),
    "getframe-loop": (GETFRAME_LOOP, STDLIB, None),
    "jaxlib": ("_r = get_traceback()", JAX, None),
    "loop-overhead": ("_r = is_finalizing()", STDLIB, None),
}
CALLSITE_METHODS = ("callsite-internal", "callsite-public")
PEER_METHODS = ("getframe-loop", "jaxlib", "loop-overhead")


# --- child: the measured program ------------------------------------------------------------

def child(method: str, depth: int, n: int) -> int:
    from callsite._cli.stacks import at_depth_in_fresh_thread
    from callsite._cli.timing import clock, compile_statement

    stmt, peer, backend = METHODS[method]
    if not peer.available():
        raise SystemExit(f"{method}: {peer.reason}")
    fns = compile_statement(stmt, peer.ns, method)
    if backend:
        import callsite
        callsite.set_backend(backend)  # RuntimeError where callsite refuses it
        # sanity: the stack really has `depth` frames
        got = len(at_depth_in_fresh_thread(depth, fns["probe"]))
        if got != depth:
            raise SystemExit(f"expected {depth} frames, captured {got}")
    at_depth_in_fresh_thread(depth, fns["loop"], n, clock)
    return 0


# --- driver ---------------------------------------------------------------------------------

def child_argv(method: str, depth: int):
    return lambda n: [sys.executable, os.path.abspath(__file__), "--child", method, str(depth),
                      str(n)]


def find(fns: dict[str, float], needle: str) -> float:
    return sum(v for k, v in fns.items() if needle in k)


class Config:
    """One (method, depth): two runs, per-iteration totals and per-function deltas."""

    def __init__(self, outdir, method, depth, n1, n2):
        self.method, self.depth, self.n1, self.n2 = method, depth, n1, n2
        self.file_of = lambda n: os.path.join(outdir, f"{method}-d{depth}-n{n}.out")

    def run(self):
        started = time.time()
        self.per_iter = _callgrind.per_iteration(child_argv(self.method, self.depth), self.n1,
                                                 self.n2, out_of=self.file_of)
        print(f"  ran {self.method} depth {self.depth} ({time.time() - started:.0f} s)",
              file=sys.stderr, flush=True)
        return self

    def inclusive(self) -> dict[str, float]:
        """Inclusive Ir per iteration of each function: callgrind_annotate's count in the N2
        run's file minus the N1 run's."""
        (_, a), (_, b) = (annotate(self.file_of(n)) for n in (self.n1, self.n2))
        return {k: (b.get(k, 0) - a.get(k, 0)) / (self.n2 - self.n1) for k in a.keys() | b.keys()}


def main(argv=None) -> int:
    ap = _common.parser(__doc__, json=False)
    ap.add_argument("--child", nargs=3, metavar=("METHOD", "DEPTH", "N"), help=argparse.SUPPRESS)
    ap.add_argument("--n1", type=_common.count, default=1000,
                    help="iterations of the first run (default 1000)")
    ap.add_argument("--n2", type=_common.count, default=11000,
                    help="iterations of the second run (default 11000)")
    ap.add_argument("--depths", type=_common.counts, default=[20, 50], help="the first is the "
                    "tables' depth; per extra frame from the first to the last (default 20,50)")
    ap.add_argument("--peers", action="store_true",
                    help="also count the sys._getframe loop, jaxlib and the bare loop")
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
    return capture_main(args)


def capture_main(args) -> int:
    import callsite

    n1, n2, outdir, depths = args.n1, args.n2, args.out, args.depths
    d0, d1 = depths[0], depths[-1]
    print(f"## callgrind: instructions per capture — {_common.environment_line()}\n")
    print(f"callsite from {os.path.dirname(callsite.__file__)} (layout {callsite.layout_name}); "
          f"N1={n1}, N2={n2}; out files in {os.path.abspath(outdir)}\n")
    methods = []
    for m in CALLSITE_METHODS + (PEER_METHODS if args.peers else ()):
        if (peer := METHODS[m][1]).available():
            methods.append(m)
        else:
            print(f"{m} skipped: {peer.reason}")

    configs = {(m, d): Config(outdir, m, d, n1, n2).run()
               for m in methods for d in (depths if m in CALLSITE_METHODS else depths[:1])}

    # Inclusive Ir per iteration inside capture_py and traceback_dealloc, per (method, depth).
    inside = {key: [find(inclusive, fn) for fn in (CAPTURE_FN, DEALLOC_FN)] for key, inclusive in
              ((key, c.inclusive()) for key, c in configs.items() if key[0] in CALLSITE_METHODS)}
    rows = []
    for m in methods:
        c, ours = configs[m, d0], m in CALLSITE_METHODS
        row = [m, f"{c.per_iter:,.0f}", *(f"{v:,.0f}" for v in inside.get((m, d0), ()))]
        if ours and d1 != d0:  # per extra frame
            row += [f"{(far - near) / (d1 - d0):.1f}" for near, far in zip(inside[m, d0],
                                                                            inside[m, d1])]
            row.append(f"{(configs[m, d1].per_iter - c.per_iter) / (d1 - d0):.1f}")
        rows.append(row + ["—"] * (7 - len(row)))
    print(f"### Ir per loop iteration at depth {d0} (per extra frame: depth {d0}→{d1})\n")
    print(markdown_table(("method", "whole iteration", "capture_py", "traceback_dealloc",
                          "capture_py /frame", "traceback_dealloc /frame", "whole /frame"), rows))

    # Where the instructions go is callgrind_annotate's to show, from the kept files; the
    # toggle runs' files hold the capture path alone, for its per-line counts.
    print("\nper function: callgrind_annotate --inclusive=yes --tree=calling FILE, on")
    for m in (x for x in methods if x in CALLSITE_METHODS):
        print(f"  {os.path.relpath(configs[m, d0].file_of(n2))}")
        f = os.path.join(outdir, f"{m}-d{d0}-n{n2}-capture_py-only.out")
        ir, _ = _callgrind.count(child_argv(m, d0)(n2), out=f, toggle=CAPTURE_FN + "*")
        print(f"  {os.path.relpath(f)}: --toggle-collect={CAPTURE_FN}*, {ir / n2:,.1f} Ir per "
              f"capture (the {d0}-frame sanity probe included); callgrind_annotate --auto=yes "
              f"gives its per-line counts")
    return 0


if __name__ == "__main__":
    sys.exit(main())
