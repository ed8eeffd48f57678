"""bench_dsls — what source locations cost real DSLs: build time of one design per DSL with
(a) no locations, (b) the DSL's own location mechanism, (c) MLIR's loc_tracebacks() of its
bindings, (d) the same switch served by callsite (callsite.mlir.accelerate()).

    python bench/bench_dsls.py [--dsl pycde_design ...] [--repeats 5] [--seconds 0.3]
    python bench/bench_dsls.py --instructions [--builds 3]      (valgrind, Python 3.11+)
    either with --json PATH: the results and the run's metadata as a file

The designs are the integration tests' (tests/dsl/*_design.py); each DSL runs in its own process
(pycde and iree cannot share one), skipped with the reason when not installed. Timing: the four
modes interleaved round-robin, `repeats` rounds of n builds (n calibrated to ~`seconds` a mode),
gc off, process CPU time, minimum kept. --instructions counts instead (a few percent is below a
shared machine's timing noise): each (DSL, mode) in its own process under callgrind
(bench/_callgrind.py), collecting only inside `operator.call`, through which the worker makes
exactly `builds` builds after warming that mode up. Ratios: d/a, (c-a)/(d-a) (MLIR's added cost
over callsite's) and (b-a)/(d-a) (the DSL's own over callsite's).
"""
from __future__ import annotations

import contextlib
import importlib
import json
import operator
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # for _common and _callgrind (bench only)
import _callgrind  # noqa: E402
import _common  # noqa: E402
from callsite._cli.timing import collector_off, minima, round_robin  # noqa: E402

DESIGNS_DIR = os.path.join(os.path.dirname(HERE), "tests", "dsl")
DESIGNS = {  # design module -> (label, pip name, SCALE: the design's size here)
    "pycde_design": ("pycde", "pycde", 20),
    "cute_design": ("CuTe DSL (dry-run)", "nvidia-cutlass-dsl", 50),
    "jaxlib_design": ("jaxlib.mlir", "jaxlib", 300),
    "iree_design": ("iree", "iree-base-compiler", 400),
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
            with (ir.loc_tracebacks(**actions) if mlir_on and not own_is_mlir else
                  contextlib.nullcontext()):
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
    with scope(), collector_off():
        start = time.process_time()  # CPU time: time preempted by other processes is not ours
        for _ in range(n):
            design.build(collect=False)
        return (time.process_time() - start) / n


def _load_design(name: str):
    sys.path.insert(0, DESIGNS_DIR)
    design = importlib.import_module(name)
    design.SCALE = DESIGNS[name][2]
    return design


def _comparable_design(name: str):
    """The design, or an exit with the reason when its bindings record no frames in MLIR's
    loc_tracebacks() (iree's stable-ABI wheels, 3.12+): no walk to compare with. Asked by the
    timing worker and by the probe before any count, not inside the counted process."""
    from bench_mlir import mlir_walk_refusal

    design = _load_design(name)
    if why := mlir_walk_refusal(design.IR, design.IR.Context):
        raise SystemExit(f"MLIR's walk: {why}")
    return design


def _worker_env() -> dict:
    """The environment of a worker: CALLSITE_MLIR would accelerate every mode."""
    return {k: v for k, v in os.environ.items() if k != "CALLSITE_MLIR"}


def _skip_reason(name: str, stderr: str) -> str:
    last = (stderr.strip().splitlines() or ["?"])[-1]
    return f"{DESIGNS[name][1]} not installed" if "ModuleNotFoundError" in stderr else last[:160]


def worker(name: str, repeats: str, seconds: str) -> dict:
    """Times `name`'s modes (the arguments as the worker's command line spells them)."""
    design = _comparable_design(name)
    modes = {k: v for k, v in _modes(design).items() if v is not None}
    ops = len(design.build())
    for scope in modes.values():  # warm every path (imports, JIT caches, location caches)
        _time_builds(design, scope, 2)
    n = max(1, int(float(seconds) / max(_time_builds(design, modes["none"], 3), 1e-6)))
    timed = round_robin(lambda mode, _: _time_builds(design, modes[mode], n), modes,
                        repeats=int(repeats))
    return {"ops": ops, "builds_per_round": n, "seconds_per_build": minima(timed),
            "python": sys.version.split()[0]}


def count_worker(name: str, mode: str, builds: str) -> dict:
    """Builds `builds` times through operator.call, the only calls callgrind collects."""
    design = _load_design(name)
    scope = _modes(design)[mode]
    ops = len(design.build())
    _time_builds(design, scope, 2)  # warm this mode's paths and caches
    with scope(), collector_off():
        for _ in range(int(builds)):
            operator.call(design.build, collect=False)
    return {"ops": ops}


def present_modes(name: str) -> dict:
    """The modes `name`'s DSL has (its design loaded in this process, nothing built)."""
    modes = _modes(_comparable_design(name))
    return {"modes": [mode for mode in MODES if modes[mode] is not None]}


def in_worker(name: str, *options: str) -> dict:
    """This script run with `options` in a process of its own: the JSON it printed last, or
    why the DSL is skipped."""
    done = subprocess.run([sys.executable, __file__, *options], capture_output=True, text=True,
                          env=_worker_env(), cwd=DESIGNS_DIR)
    if done.returncode != 0:
        return {"skipped": _skip_reason(name, done.stderr)}
    return json.loads(done.stdout.strip().splitlines()[-1])


def count_instructions(name: str, builds: int) -> dict:
    """mode -> instructions per build of `name`'s design, each mode in its own valgrind run."""
    # Which modes exist, and whether the DSL loads at all, asked without valgrind.
    probe = in_worker(name, "--modes-worker", name)
    if "skipped" in probe:
        return probe
    per_build: dict = {}
    ops = 0
    for mode in probe["modes"]:
        try:
            collected, out = _callgrind.count(
                [sys.executable, __file__, "--count-worker", name, mode, str(builds)],
                toggle="_operator_call*", env=_worker_env(), cwd=DESIGNS_DIR)
        except _callgrind.CallgrindError as e:
            return {"skipped": _skip_reason(name, str(e))}
        ops = json.loads(out.strip().splitlines()[-1])["ops"]
        per_build[mode] = collected / builds
    return {"ops": ops, "instructions_per_build": per_build}


# --- driver ------------------------------------------------------------------------------------

def table(payload: dict) -> str:
    """The benchmarks page's table of this run."""
    return _common.run_table(_common.page_tables().dsls_table, "dsls", payload)


WORKERS = {"--worker": worker, "--count-worker": count_worker, "--modes-worker": present_modes}


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] in WORKERS:  # a process of in_worker's or callgrind's
        print(json.dumps(WORKERS[sys.argv[1]](*sys.argv[2:])))
        return
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=5)
    parser.add_argument("--dsl", action="append", choices=list(DESIGNS))
    parser.add_argument("--seconds", type=float, default=0.3)
    parser.add_argument("--instructions", action="store_true",
                        help="count instructions under callgrind instead of timing")
    parser.add_argument("--builds", type=_common.count, default=3,
                        help="with --instructions: builds counted per mode")
    args = parser.parse_args()
    if args.seconds <= 0:
        parser.error(f"--seconds: expected a time > 0, got {args.seconds}")
    if args.instructions and (not hasattr(operator, "call") or _callgrind.missing()):
        sys.exit("--instructions needs Python 3.11+ (operator.call) and valgrind on PATH")
    results = {}
    for name in args.dsl or list(DESIGNS):
        results[name] = r = count_instructions(name, args.builds) if args.instructions else \
            in_worker(name, "--worker", name, str(args.repeats), str(args.seconds))
        print(f"{DESIGNS[name][0]}: {'skipped: ' + r['skipped'] if 'skipped' in r else 'done'}",
              file=sys.stderr)
    python = sys.version.split()[0]
    if args.instructions:
        key, settings = "instructions_per_build", {"builds": args.builds}
        print(f"Python {python}, instructions (callgrind) per op, {args.builds} builds per mode")
    else:
        key, settings = "seconds_per_build", {"repeats": args.repeats, "seconds": args.seconds}
        print(f"Python {python}, min of {args.repeats} interleaved rounds")
    payload = {"python": python, "measure": key, **settings,  # per DSL: its label and pip name
               "dsls": {name: {"label": DESIGNS[name][0], "package": DESIGNS[name][1], **r}
                        for name, r in results.items()}}
    print(table(payload))
    if args.json:
        _common.write_results(args.json, "dsls", payload)


if __name__ == "__main__":
    main()
