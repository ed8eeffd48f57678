# bench/callgrind_mlir.py — instructions per MLIR op location cache hit (callgrind).
"""Counts the instructions of one MLIR location lookup that hits callsite's cache.

    PYTHONPATH=build/bench-cg-311/pkg python bench/callgrind_mlir.py [--depth 20] [--n1 2000 --n2 12000]

(bench/callgrind_capture.sh builds that unstripped Release-equivalent package.) Same method as
callgrind_capture.py: each configuration runs twice under callgrind with N1 and N2 loop
iterations at exactly `depth` frames; (Ir(N2) − Ir(N1)) / (N2 − N1) is one iteration, start-up
and imports cancelling exactly. Configurations:

- location-hit: `callsite.mlir.location()` inside `with ir.Context()`, the same call site every
  iteration, so every call after the first is a cache hit (the stack is walked and hashed, the
  cached ir.Location returned);
- op-auto: `arith.constant` built under `callsite.mlir.auto_locations()` (the location comes
  from the cache on every iteration after the first);
- op-unknown: the same op under `ir.Location.unknown()` only, so op-auto − op-unknown is what
  the location costs an op.

Needs iree-base-compiler (iree.compiler.ir); prints the reason and exits 0 when it is missing.
"""
from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # for _common and callgrind_capture (bench only)

CONFIGS = ("location-hit", "op-auto", "op-unknown")


def child(config: str, depth: int, n: int) -> int:
    import gc

    import callsite.mlir
    from callsite._cli.stacks import at_depth_in_fresh_thread
    from iree.compiler import ir
    from iree.compiler.dialects import arith

    ctx = ir.Context()

    def loop_location(n, clock):
        location = callsite.mlir.location
        with ctx:
            for _ in range(n):
                location()
        return 0

    def loop_op(n, clock):
        with ctx, ir.Location.unknown():
            i32 = ir.IntegerType.get_signless(32)
            attr = ir.IntegerAttr.get(i32, 1)
            module = ir.Module.create()
            with ir.InsertionPoint(module.body):
                if config == "op-auto":
                    with callsite.mlir.auto_locations():
                        for _ in range(n):
                            arith.ConstantOp(i32, attr)
                else:
                    for _ in range(n):
                        arith.ConstantOp(i32, attr)
        return 0

    loop = loop_location if config == "location-hit" else loop_op
    # A collection's cost depends on everything alive, not on the loop: with the collector on,
    # N1 and N2 runs collect a different number of times and the difference is not the loop's.
    gc.disable()
    at_depth_in_fresh_thread(depth, loop, n, None)
    return 0


def run(out_file: str, config: str, depth: int, n: int) -> int:
    from callgrind_capture import callgrind_child
    return callgrind_child(out_file, __file__, [config, str(depth), str(n)])


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        return child(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
    import _common

    p = _common.parser(__doc__.splitlines()[0], json=False)
    p.add_argument("--depth", type=_common.count, default=20)
    p.add_argument("--n1", type=_common.count, default=2000)
    p.add_argument("--n2", type=_common.count, default=12000)
    p.add_argument("--configs", type=_common.names(CONFIGS), default=list(CONFIGS))
    p.add_argument("--out", default=None, type=_common.output_dir,
                   help="directory for the callgrind.out files (created when missing)")
    args = p.parse_args()
    try:
        import iree.compiler.ir  # noqa: F401
    except ImportError as e:
        print(f"skipped: iree-base-compiler is not installed ({e})")
        return 0
    out = args.out or os.path.join(HERE, "..", "build", "callgrind",
                                   f"py{sys.version_info[0]}{sys.version_info[1]}")
    os.makedirs(out, exist_ok=True)
    print(f"Python {sys.version.split()[0]}, depth {args.depth}, "
          f"Ir per iteration = (Ir(n={args.n2}) - Ir(n={args.n1})) / {args.n2 - args.n1}\n")
    print("| configuration | Ir per iteration |\n|---|---:|")
    per = {}
    for config in args.configs:
        t1, t2 = (run(os.path.join(out, f"mlir-{config}-d{args.depth}-n{n}.out"), config,
                      args.depth, n) for n in (args.n1, args.n2))
        per[config] = (t2 - t1) / (args.n2 - args.n1)
        print(f"| {config} | {per[config]:.1f} |", flush=True)
    if "op-auto" in per and "op-unknown" in per:
        print(f"| op-auto − op-unknown (location per op) | {per['op-auto'] - per['op-unknown']:.1f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
