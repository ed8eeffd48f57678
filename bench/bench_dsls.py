"""bench_dsls — what source locations cost real DSLs: build time of one design per DSL with
(a) no locations, (b) the DSL's own location mechanism, (c) MLIR's loc_tracebacks() of its
bindings, (d) the same switch served by callsite (callsite.mlir.accelerate()).

    python bench/bench_dsls.py [--dsl pycde_design ...] [--repeats 5] [--seconds 0.3]

The designs are the integration tests' (tests/dsl/*_design.py: pycde, CuTe DSL in dry-run mode,
jaxlib, iree). Each DSL runs in its own process (pycde and iree cannot share one); a DSL that
is not installed is skipped with the reason. In a process the four modes are interleaved,
`repeats` rounds of `n` builds each (n calibrated so a mode takes ~`seconds`), gc off while
timed, process CPU time (this machine is shared); the minimum per mode is kept. Ratios: d/a (target <= 1.10), (c-a)/(d-a) (MLIR's added
cost over callsite's, target >= 10) and (b-a)/(d-a) (the DSL's own over callsite's; pycde
target >= 20).
"""
from __future__ import annotations

import argparse
import contextlib
import gc
import importlib
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DESIGNS_DIR = os.path.join(os.path.dirname(HERE), "tests", "dsl")
DESIGNS = {  # design module -> (label, package, pip name, SCALE: the design's size here)
    "pycde_design": ("pycde", "pycde", "pycde", 20),
    "cute_design": ("CuTe DSL (dry-run)", "cutlass", "nvidia-cutlass-dsl", 50),
    "jaxlib_design": ("jaxlib.mlir", "jaxlib", "jaxlib", 300),
    "iree_design": ("iree", "iree.compiler", "iree-base-compiler", 400),
}
MODES = ("none", "own", "mlir", "callsite")


# --- one DSL, in its own process -------------------------------------------------------------

def _modes(design):
    """mode -> context manager factory, or None when the DSL has no such mechanism."""
    import callsite.mlir

    ir = design.IR
    own = getattr(design, "own_locations", None)
    own_is_mlir = getattr(design, "OWN_IS_MLIR_SWITCH", False)
    rules = getattr(design, "register_rules", lambda: None)
    actions = dict(max_depth=design.LIMIT, on_explicit_actn=getattr(
        ir.OnExplicitAction, getattr(design, "ON_EXPLICIT", "use_explicit").upper()))

    @contextlib.contextmanager
    def switch(own_on: bool, mlir_on: bool, accelerated: bool):
        if own is not None:
            own(own_on)
        if accelerated:
            callsite.mlir.accelerate(ir)
        rules()
        try:
            if mlir_on and not own_is_mlir:
                with ir.loc_tracebacks(**actions):
                    yield
            else:
                yield
        finally:
            if accelerated:
                callsite.mlir.decelerate(ir)
            if own is not None:
                own(False)

    return {
        "none": lambda: switch(False, False, False),
        "own": (lambda: switch(True, False, False)) if own is not None and not own_is_mlir else None,
        "mlir": lambda: switch(own_is_mlir, True, False),
        "callsite": lambda: switch(own_is_mlir, True, True),
    }


def _time_builds(design, scope, n: int) -> float:
    with scope():
        gc.collect()
        gc.disable()
        try:
            start = time.process_time()  # CPU time: time preempted by other processes is not ours
            for _ in range(n):
                design.build(collect=False)
            return (time.process_time() - start) / n
        finally:
            gc.enable()


def worker(name: str, repeats: int, seconds: float) -> dict:
    sys.path.insert(0, DESIGNS_DIR)
    design = importlib.import_module(name)
    design.SCALE = DESIGNS[name][3]
    modes = {k: v for k, v in _modes(design).items() if v is not None}
    ops = len(design.build())
    for scope in modes.values():  # warm every path (imports, JIT caches, location caches)
        _time_builds(design, scope, 2)
    n = max(1, int(seconds / max(_time_builds(design, modes["none"], 3), 1e-6)))
    best = {k: float("inf") for k in modes}
    for _ in range(repeats):
        for mode, scope in modes.items():
            best[mode] = min(best[mode], _time_builds(design, scope, n))
    return {"ops": ops, "builds_per_round": n, "seconds_per_build": best,
            "python": sys.version.split()[0]}


# --- driver ------------------------------------------------------------------------------------

def _ratio(x: float, y: float) -> str:
    return f"{x / y:.1f}x" if y > 0 else "n/a (callsite adds nothing measurable)"


def table(results: dict) -> str:
    lines = ["| DSL | ops | (a) none, ms | (b) DSL's own | (c) MLIR loc_tracebacks | (d) callsite "
             "| d/a | (c-a)/(d-a) | (b-a)/(d-a) |", "|---|---|---|---|---|---|---|---|---|"]
    for name, r in results.items():
        label = DESIGNS[name][0]
        if "skipped" in r:
            lines.append(f"| {label} | skipped: {r['skipped']} |||||||| ")
            continue
        t = r["seconds_per_build"]
        a, c, d = t["none"], t["mlir"], t["callsite"]
        b = t.get("own")
        ms = lambda x: f"{x * 1e3:.2f}"  # noqa: E731
        own = ms(b) if b is not None else ("= (c)" if name == "cute_design" else "none")
        lines.append(f"| {label} | {r['ops']} | {ms(a)} | {own} | {ms(c)} | {ms(d)} | "
                     f"{d / a:.3f} | {_ratio(c - a, d - a)} | "
                     f"{_ratio(b - a, d - a) if b is not None else '-'} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dsl", action="append", choices=list(DESIGNS))
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeats, args.seconds)))
        return
    results = {}
    for name in args.dsl or list(DESIGNS):
        label, package, pip_name, _ = DESIGNS[name]
        env = {k: v for k, v in os.environ.items() if k != "CALLSITE_MLIR"}
        done = subprocess.run([sys.executable, __file__, "--worker", name, "--repeats",
                               str(args.repeats), "--seconds", str(args.seconds)],
                              capture_output=True, text=True, env=env, cwd=DESIGNS_DIR)
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["?"])[-1]
            reason = (f"{pip_name} not installed" if "ModuleNotFoundError" in done.stderr
                      else last[:160])
            print(f"skipping {label}: {reason}", file=sys.stderr)
            results[name] = {"skipped": reason}
            continue
        results[name] = json.loads(done.stdout.strip().splitlines()[-1])
        print(f"{label}: done", file=sys.stderr)
    print(f"Python {sys.version.split()[0]}, min of {args.repeats} interleaved rounds")
    print(table(results))


if __name__ == "__main__":
    main()
