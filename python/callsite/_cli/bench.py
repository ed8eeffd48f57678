"""``python -m callsite bench``: a short benchmark of what callsite costs, against the peers
that are installed here, as one table of ratios measured in the same run.

Groups, each with its own baseline row (ratio 1.00): the import itself; capture at stack
depth 20 twice — on a stack that is reused between captures, and on a fresh stack built for
each capture (callsite's two walks, ``sys._getframe``, ``traceback``, jaxlib and torch when
installed); a location per MLIR op (``Location.unknown()``, MLIR's ``loc_tracebacks()``,
``callsite.mlir.auto_locations``, when bindings are installed); tracked call windows (the tax
per recorded call of each mode, and the window's query against a filtered walk). Every number
is the minimum over interleaved repeats: noise on a shared machine only ever adds time. The
full benchmarks, with more depths and peers, are in the repository's bench/ directory.

Why two capture groups: since 3.11 CPython creates a frame's Python object
(``PyFrameObject``) only when something asks for it, and ``sys._getframe()`` / ``f_back``
ask for one per frame. On a reused stack those objects exist after the first walk, so a
``sys._getframe`` loop only reads them; on a fresh stack it allocates one per frame, every
time. callsite reads the interpreter's frames and allocates no frame object, so its cost is
the same on both. A real DSL is in between: its outer frames persist, the innermost few are
new for every op.
"""
from __future__ import annotations

import gc
import importlib
import itertools
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import textwrap
import time
from dataclasses import asdict, dataclass
from types import FrameType
from typing import Any, Callable

DEPTH = 20
IMPORT_TARGET_MS = 3.0
_clock = time.perf_counter_ns


@dataclass
class Row:
    group: str
    method: str
    value: float  # ns per operation; ms for the import group
    unit: str
    ratio: float | None = None  # value / the group's baseline value


class Progress:
    """One line per step on stderr, so a slow step is visibly still running."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0

    def step(self, label: str) -> None:
        self.done += 1
        print(f"[{self.done:2}/{self.total}] {label} ...", file=sys.stderr, flush=True)


# --- timing -------------------------------------------------------------------------------------

def _loop(stmt: str, namespace: dict[str, Any]) -> Callable[[int], int]:
    """stmt compiled into its own loop (timeit's technique: no Python call per iteration)."""
    src = (f"def loop(_n, _clock=_clock, _repeat=_repeat):\n    _t0 = _clock()\n"
           f"    for _ in _repeat(None, _n):\n        {stmt}\n    return _clock() - _t0\n")
    ns = dict(namespace, _clock=_clock, _repeat=itertools.repeat)
    exec(compile(src, f"<callsite bench: {stmt}>", "exec"), ns)
    loop: Callable[[int], int] = ns["loop"]
    return loop


def _frames_above(frame: FrameType | None) -> int:
    """How many frames the stack holds from `frame` outwards, `frame` included."""
    n = 0
    while frame is not None:
        n += 1
        frame = frame.f_back
    return n


def _at_depth(depth: int, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) called with `depth` Python frames on the stack, fn's own frame the innermost
    (real recursion, nothing simulated)."""
    # Frames when fn runs: those above this one, this one, the descend() frames, fn's.
    here = _frames_above(sys._getframe())

    def descend(n: int) -> Any:
        return descend(n - 1) if n > 0 else fn(*args)

    return descend(max(depth - here - 2, 0))


def _optional(module: str) -> Any:
    """An optional peer's module (ImportError when it is not installed). Imported by name:
    peers ship without type information, and a type checker must not follow them."""
    return importlib.import_module(module)


def time_statements(stmts: dict[str, str], namespace: dict[str, Any], *, repeats: int,
                    depth: int = DEPTH, target_ns: float = 4e6) -> dict[str, float]:
    """ns per run of each statement at `depth` frames: calibrated loops, run round-robin,
    minimum over the repeats."""
    loops = {label: _loop(stmt, namespace) for label, stmt in stmts.items()}
    return _round_robin_minimum(loops, lambda loop, n: _at_depth(depth, loop, n),
                                repeats=repeats, target_ns=target_ns)


def _round_robin_minimum(loops: dict[str, Any], run: Callable[[Any, int], float], *,
                         repeats: int, target_ns: float) -> dict[str, float]:
    """ns per iteration of each loop (`run(loop, n)` times n iterations): each calibrated to
    about target_ns, then all run in turn `repeats` times with gc off, keeping the minimum (the
    noise of a shared machine only ever adds time)."""
    counts = {}
    for label, loop in loops.items():
        n = 1
        while (elapsed := run(loop, n)) < target_ns / 4:
            n *= 4
        counts[label] = max(1, int(n * target_ns / max(elapsed, 1)))
    best = {label: float("inf") for label in loops}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for label, loop in loops.items():
                best[label] = min(best[label], run(loop, counts[label]) / counts[label])
    finally:
        if enabled:
            gc.enable()
    return best


def time_on_fresh_stacks(fns: dict[str, Callable[[], Any]], *, repeats: int,
                         depth: int = DEPTH, target_ns: float = 4e6) -> dict[str, float]:
    """ns per call of each fn, each call on a stack of `depth` frames built for it alone (fn's
    frame the innermost), net of building that stack: the same loop calling an empty function
    is subtracted. Calibrated, round-robin, minimum over the repeats."""
    def empty() -> None:
        return None

    def loop_for(fn: Callable[[], Any]) -> Callable[[int], int]:
        def descend(n: int) -> Any:
            return descend(n - 1) if n > 0 else fn()

        def loop(n: int) -> int:
            # Frames when fn runs: the loop's and those above it, descend()'s, fn's own.
            levels = max(depth - _frames_above(sys._getframe()) - 2, 0)
            t0 = _clock()
            for _ in itertools.repeat(None, n):
                descend(levels)
            return _clock() - t0

        return loop

    loops = {label: loop_for(fn) for label, fn in {**fns, "": empty}.items()}
    best = _round_robin_minimum(loops, lambda loop, n: loop(n), repeats=repeats,
                                target_ns=target_ns)
    stack = best.pop("")
    return {label: max(t - stack, 0.0) for label, t in best.items()}


# --- the groups ---------------------------------------------------------------------------------

def import_time_ms(runs: int) -> float:
    """``import callsite`` in a fresh interpreter, from ``-X importtime`` (cumulative, ms;
    the minimum over runs)."""
    best = float("inf")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPROFILEIMPORTTIME"}
    for _ in range(runs):
        err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import callsite"],
                             capture_output=True, text=True, env=env, check=True).stderr
        for line in err.splitlines():
            m = re.match(r"import time:\s*(\d+)\s*\|\s*(\d+)\s*\|\s?callsite\s*$", line)
            if m:
                best = min(best, int(m.group(2)) / 1000)
    if best == float("inf"):
        raise RuntimeError("`python -X importtime -c 'import callsite'` reported no callsite line")
    return best


def _peer(label: str, setup: Callable[[], dict[str, Any]], skipped: list[str]) -> dict[str, Any]:
    try:
        return setup()
    except Exception as e:  # a peer that is not installed, or broken, is skipped with the reason
        skipped.append(f"{label}: {type(e).__name__}: {e}")
        return {}


REUSED = f"capture, depth {DEPTH}, stack reused (frames exist before the capture)"
FRESH = f"capture, depth {DEPTH}, fresh stack per capture (net of building the stack)"
GETFRAME = "sys._getframe loop collecting (f_code, f_lasti)"


def _getframe_walk() -> list[tuple[Any, int]]:
    """What a Python tool writes without callsite: the stack as (code, instruction offset)."""
    f: FrameType | None = sys._getframe()
    r = []
    while f is not None:
        r.append((f.f_code, f.f_lasti))
        f = f.f_back
    return r


def capture_group(repeats: int, skipped: list[str], progress: Progress) -> list[Row]:
    import traceback

    import callsite

    progress.step(f"capture at depth {DEPTH}, reused and fresh stacks: callsite, "
                  "sys._getframe, traceback, peers")
    ns: dict[str, Any] = {"callsite": callsite, "sys": sys, "traceback": traceback}
    stmts = {
        "callsite.capture() (internal walk)": "callsite.capture()",
        GETFRAME: "f = sys._getframe()\n        r = []\n        while f is not None:\n"
                  "            r.append((f.f_code, f.f_lasti)); f = f.f_back",
        "traceback.extract_stack()": "traceback.extract_stack()",
    }
    fresh: dict[str, Callable[[], Any]] = {
        "callsite.capture() (internal walk)": lambda: callsite.capture(),
        GETFRAME: _getframe_walk,
        "traceback.extract_stack()": lambda: traceback.extract_stack(),
    }

    def jaxlib() -> dict[str, Any]:
        return {"jax_tb": _optional("jaxlib.xla_client").Traceback}

    def torch() -> dict[str, Any]:
        return {"torch_tb": _optional("torch.utils._traceback").CapturedTraceback}

    ns.update(_peer("jaxlib", jaxlib, skipped))
    ns.update(_peer("torch", torch, skipped))
    if "jax_tb" in ns:
        stmts["jaxlib Traceback.get_traceback()"] = "jax_tb.get_traceback()"
        fresh["jaxlib Traceback.get_traceback()"] = lambda: ns["jax_tb"].get_traceback()
    if "torch_tb" in ns:
        stmts["torch CapturedTraceback.extract()"] = "torch_tb.extract()"
        fresh["torch CapturedTraceback.extract()"] = lambda: ns["torch_tb"].extract()
    results = time_statements(stmts, ns, repeats=repeats)
    on_fresh = time_on_fresh_stacks(fresh, repeats=repeats)
    previous = callsite.get_backend()
    try:
        callsite.set_backend("public")
        public = time_statements({"p": "callsite.capture()"}, ns, repeats=repeats)["p"]
    finally:
        callsite.set_backend(previous)
    results = {"callsite.capture() (internal walk)": results.pop("callsite.capture() (internal walk)"),
               "callsite.capture() (public C API walk)": public, **results}
    if previous != "internal":
        skipped.append(f"the internal walk: in use is {previous!r} "
                       f"({callsite.internal_backend_refusal() or 'selected'})")
    return ([Row(REUSED, k, v, "ns") for k, v in results.items()]
            + [Row(FRESH, k, v, "ns") for k, v in on_fresh.items()])


def mlir_group(repeats: int, skipped: list[str], progress: Progress) -> list[Row]:
    progress.step("MLIR: a location per op (unknown, loc_tracebacks, callsite)")
    try:
        ir, arith = _optional("iree.compiler.ir"), _optional("iree.compiler.dialects.arith")
    except ImportError:
        try:
            ir, arith = _optional("mlir.ir"), _optional("mlir.dialects.arith")
        except ImportError as e:
            skipped.append(f'MLIR group: no MLIR bindings ({e}); pip install "callsite[mlir]"')
            return []
    import callsite.mlir

    ops = 200
    i32 = None
    results: dict[str, float] = {}
    with ir.Context(), ir.Location.unknown():
        i32 = ir.IntegerType.get_signless(32)
        module = ir.Module.create()

        def build() -> None:
            with ir.InsertionPoint(module.body):
                for _ in range(ops):
                    arith.constant(i32, 1)
            for op in list(module.body.operations):
                op.erase()

        scopes: dict[str, Callable[[], Any]] = {
            "Location.unknown() (no location work)": lambda: _nothing(),
            "callsite.mlir.auto_locations()": lambda: callsite.mlir.auto_locations(),
        }
        if hasattr(ir, "loc_tracebacks"):
            label = "MLIR ir.loc_tracebacks()"
            if not _records_frames(ir, arith, i32):
                label += " (records no frames in this build)"
            scopes[label] = lambda: ir.loc_tracebacks()
        else:
            skipped.append("MLIR loc_tracebacks(): these bindings have none")
        best = {label: float("inf") for label in scopes}
        for _ in range(repeats):
            for label, scope in scopes.items():
                with scope():
                    t0 = _clock()
                    _at_depth(DEPTH, build)
                    best[label] = min(best[label], (_clock() - t0) / ops)
        results = best
    return [Row("MLIR op with a location, depth 20", k, v, "ns/op") for k, v in results.items()]


def _records_frames(ir: Any, arith: Any, i32: Any) -> bool:
    """Whether the bindings' own loc_tracebacks() puts this file in a location (some wheels,
    built for the stable ABI, record nothing)."""
    module = ir.Module.create()
    with ir.InsertionPoint(module.body), ir.loc_tracebacks():
        op = arith.constant(i32, 1)
    return __file__ in str(op.owner.location if hasattr(op, "owner") else op.location)


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def _leaf() -> None:
    return None


def _calls(n: int) -> None:
    leaf = _leaf
    for _ in range(n):
        leaf()


def tracking_group(repeats: int, skipped: list[str], progress: Progress) -> list[Row]:
    import callsite
    from callsite import tracking

    progress.step("tracked windows: tax per call of each mode, query vs walk")
    modes = tracking.available_modes()
    modes.pop("auto")
    calls = 20_000
    best: dict[str, float] = {"tracking off: a Python call": float("inf")}
    usable: list[Any] = [m for m, why in modes.items() if why is None]
    skipped += [f"tracking mode {m}: {why}" for m, why in modes.items() if why is not None]
    for m in usable:
        best[f"tracking on ({m}): a Python call"] = float("inf")
    for _ in range(repeats):
        t0 = _clock()
        _calls(calls)
        best["tracking off: a Python call"] = min(best["tracking off: a Python call"],
                                                  (_clock() - t0) / calls)
        for m in usable:
            with tracking.enable(mode=m, window=8):
                t0 = _clock()
                _calls(calls)
                elapsed = (_clock() - t0) / calls
            key = f"tracking on ({m}): a Python call"
            best[key] = min(best[key], elapsed)
    rows = [Row("tracked windows", k, v, "ns") for k, v in best.items()]
    here = callsite.Filter()
    here.exclude_file(__file__)
    ns = {"tracking": tracking, "here": here}
    with tracking.enable(window=8):
        query = time_statements({"window": "tracking.last(here)",
                                 "walk": "here.first_user_frame()"}, ns, repeats=repeats)
    rows.append(Row("query: the most recent user frame", "Filter.first_user_frame() (a walk)",
                    query["walk"], "ns"))
    rows.append(Row("query: the most recent user frame", "tracking.last(filter) (the window)",
                    query["window"], "ns"))
    return rows


def getframe_note(rows: list[Row]) -> str:
    """The sys._getframe loop's ratio on both stacks, and why they differ."""
    ratio = {r.group: r.ratio for r in rows if r.method == GETFRAME and r.ratio is not None}
    if REUSED not in ratio or FRESH not in ratio:
        return ""
    why = ("sys._getframe() and f_back create a frame object per frame the first time each is "
           "reached (CPython 3.11+ creates them lazily): on a reused stack they exist after the "
           "first walk, on a fresh stack every walk allocates them."
           if sys.version_info >= (3, 11) else
           "Before 3.11 every frame is a frame object from its start, so both stacks cost the "
           "sys._getframe loop about the same.")
    return textwrap.fill(
        f"The sys._getframe loop is {ratio[REUSED]:.1f}× a callsite capture on a reused stack and "
        f"{ratio[FRESH]:.1f}× on a fresh one. {why} callsite reads the interpreter's own frames and "
        "allocates none, so its cost is the same on both. Building ops in a DSL is in between: the "
        "outer frames persist, the innermost few are new for each op.", width=100)


def cpu_model() -> str:
    """The processor's model name (Linux's /proc/cpuinfo), else what platform knows."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def run_metadata(command: str | None = None) -> dict[str, Any]:
    """When, where and how a result was measured, for the result files and their plots."""
    if command is None:
        args = sys.argv[1:] if sys.argv and sys.argv[0].endswith("__main__.py") else sys.argv
        command = "python -m callsite " + " ".join(shlex.quote(a) for a in args)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "command": command,
            "machine": {"cpu": cpu_model(), "cpus": os.cpu_count(), "system": platform.platform(),
                        "load_average_1min": load},
            "interpreter": f"{platform.python_implementation()} {platform.python_version()}"}


# --- output -------------------------------------------------------------------------------------

def with_ratios(rows: list[Row]) -> list[Row]:
    """Each row's ratio to the first row of its group."""
    base: dict[str, float] = {}
    for r in rows:
        base.setdefault(r.group, r.value)
        r.ratio = r.value / base[r.group] if base[r.group] > 0 else None
    return rows


def _fmt(value: float, unit: str) -> str:
    if unit == "ms":
        return f"{value:.2f} ms"
    return f"{value / 1000:,.1f} µs" if value >= 10_000 else f"{value:,.1f} {unit}"


def table(rows: list[Row]) -> str:
    width = max(len(r.method) for r in rows)
    out, group = [], None
    out.append(f"{'':{width}}  {'time':>14}  {'ratio':>8}")
    for r in rows:
        if r.group != group:
            group = r.group
            out.append(f"{group}:")
        if r.ratio is not None:
            ratio = f"{r.ratio:.2f}×"
        else:  # the import (no ratio), or a group whose net baseline the noise left at zero
            ratio = "" if r.unit == "ms" else "noise"
        out.append(f"  {r.method:<{width - 2}}  {_fmt(r.value, r.unit):>14}  {ratio:>8}")
    return "\n".join(out)


def plot(rows: list[Row], path: str) -> None:
    _optional("matplotlib").use("Agg")
    plt = _optional("matplotlib.pyplot")

    shown = [r for r in rows if r.ratio is not None and r.unit != "ms"]
    fig, ax = plt.subplots(figsize=(9, 0.4 * len(shown) + 1))
    ax.barh([f"{r.group}: {r.method}" for r in shown], [r.ratio for r in shown])
    ax.set_xscale("log")
    ax.set_xlabel("time relative to the first row of its group (log scale)")
    ax.invert_yaxis()
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main(json_path: str | None = None, plot_path: str | None = None, quick: bool = False) -> int:
    import callsite

    if plot_path:
        try:
            _optional("matplotlib")
        except ImportError:
            print('callsite bench: --plot needs matplotlib: pip install "callsite[plot]"',
                  file=sys.stderr)
            return 2
    repeats = 3 if quick else 9
    skipped: list[str] = []
    progress = Progress(5)
    print(f"callsite {callsite.__version__} bench: Python {sys.version.split()[0]}, backend "
          f"{callsite.get_backend()}, layout {callsite.layout_name}", file=sys.stderr)
    progress.step("import callsite in a fresh interpreter (-X importtime)")
    import_ms = import_time_ms(runs=5 if quick else 11)
    rows = [Row("import callsite (fresh interpreter, -X importtime)", "import callsite",
                import_ms, "ms")]
    rows += capture_group(repeats, skipped, progress)
    rows += mlir_group(repeats, skipped, progress)
    rows += tracking_group(repeats, skipped, progress)
    progress.step("done")
    with_ratios(rows)
    rows[0].ratio = None  # the import has no peer row: its target is printed instead
    print(f"\ncallsite {callsite.__version__}, Python {sys.version.split()[0]}, min of {repeats} "
          "interleaved repeats; ratio = time / the first row of the group\n")
    print(table(rows))
    verdict = "within" if import_ms <= IMPORT_TARGET_MS else "OVER"
    print(f"\nimport callsite: {import_ms:.2f} ms, {verdict} the {IMPORT_TARGET_MS:g} ms target")
    note = getframe_note(rows)
    if note:
        print("\n" + note)
    for s in skipped:
        print(f"skipped: {s}")
    if json_path:
        data = {**run_metadata(), "callsite": callsite.__version__,
                "python": sys.version.split()[0], "backend": callsite.get_backend(),
                "repeats": repeats, "import_ms": import_ms, "rows": [asdict(r) for r in rows],
                "skipped": skipped}
        text = json.dumps(data, indent=2)
        if json_path == "-":
            print(text)
        else:
            with open(json_path, "w") as f:
                f.write(text + "\n")
    if plot_path:
        plot(rows, plot_path)
        print(f"plot: {plot_path}")
    return 0
