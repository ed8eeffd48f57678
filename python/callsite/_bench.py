"""``python -m callsite bench``: a short benchmark of what callsite costs, against the peers
that are installed here, as one table of ratios measured in the same run.

Four groups, each with its own baseline row (ratio 1.00): the import itself; capture at stack
depth 20 (callsite's two walks, ``sys._getframe``, ``traceback``, jaxlib and torch when
installed); a location per MLIR op (``Location.unknown()``, MLIR's ``loc_tracebacks()``,
``callsite.mlir.auto_locations``, when bindings are installed); tracked call windows (the tax
per recorded call of each mode, and the window's query against a filtered walk). Every number
is the minimum over interleaved repeats: noise on a shared machine only ever adds time. The
full benchmarks, with more depths and peers, are in the repository's bench/ directory.
"""
from __future__ import annotations

import gc
import itertools
import json
import os
import re
import subprocess
import sys
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


def _at_depth(depth: int, fn: Callable[[], Any]) -> Any:
    """fn() called with `depth` Python frames on the stack (real recursion, nothing simulated)."""
    here, f = 0, sys._getframe()
    frame: FrameType | None = f
    while frame is not None:
        here += 1
        frame = frame.f_back

    def descend(n: int) -> Any:
        return descend(n - 1) if n > 0 else fn()

    return descend(max(depth - here - 2, 0))


def time_statements(stmts: dict[str, str], namespace: dict[str, Any], *, repeats: int,
                    depth: int = DEPTH, target_ns: float = 4e6) -> dict[str, float]:
    """ns per run of each statement at `depth` frames: calibrated loops, run round-robin,
    minimum over the repeats."""
    loops = {label: _loop(stmt, namespace) for label, stmt in stmts.items()}
    counts = {}
    for label, loop in loops.items():
        n = 1
        while (elapsed := _at_depth(depth, lambda: loop(n))) < target_ns / 4:
            n *= 4
        counts[label] = max(1, int(n * target_ns / max(elapsed, 1)))
    best = {label: float("inf") for label in loops}
    enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for label, loop in loops.items():
                n = counts[label]
                best[label] = min(best[label], _at_depth(depth, lambda: loop(n)) / n)
    finally:
        if enabled:
            gc.enable()
    return best


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


def capture_group(repeats: int, skipped: list[str], progress: Progress) -> list[Row]:
    import traceback

    import callsite

    progress.step(f"capture at depth {DEPTH}: callsite, sys._getframe, traceback, peers")
    ns: dict[str, Any] = {"callsite": callsite, "sys": sys, "traceback": traceback}
    stmts = {
        "callsite.capture() (internal walk)": "callsite.capture()",
        "sys._getframe loop collecting (f_code, f_lasti)":
            "f = sys._getframe()\n        r = []\n        while f is not None:\n"
            "            r.append((f.f_code, f.f_lasti)); f = f.f_back",
        "traceback.extract_stack()": "traceback.extract_stack()",
    }

    def jaxlib() -> dict[str, Any]:
        from jaxlib import xla_client  # type: ignore[import-not-found,unused-ignore]

        return {"jax_tb": xla_client.Traceback}

    def torch() -> dict[str, Any]:
        from torch.utils._traceback import (  # type: ignore[import-not-found,unused-ignore]
            CapturedTraceback,
        )

        return {"torch_tb": CapturedTraceback}

    ns.update(_peer("jaxlib", jaxlib, skipped))
    ns.update(_peer("torch", torch, skipped))
    if "jax_tb" in ns:
        stmts["jaxlib Traceback.get_traceback()"] = "jax_tb.get_traceback()"
    if "torch_tb" in ns:
        stmts["torch CapturedTraceback.extract()"] = "torch_tb.extract()"
    results = time_statements(stmts, ns, repeats=repeats)
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
    return [Row("capture, depth 20", k, v, "ns") for k, v in results.items()]


def mlir_group(repeats: int, skipped: list[str], progress: Progress) -> list[Row]:
    progress.step("MLIR: a location per op (unknown, loc_tracebacks, callsite)")
    try:
        from iree.compiler import ir  # type: ignore[import-not-found,unused-ignore]
        from iree.compiler.dialects import arith  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        try:
            from mlir import ir  # type: ignore[import-not-found,no-redef,unused-ignore]
            from mlir.dialects import arith  # type: ignore[import-not-found,no-redef,unused-ignore]
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
        ratio = "" if r.ratio is None else f"{r.ratio:.2f}×"
        out.append(f"  {r.method:<{width - 2}}  {_fmt(r.value, r.unit):>14}  {ratio:>8}")
    return "\n".join(out)


def plot(rows: list[Row], path: str) -> None:
    import matplotlib  # type: ignore[import-not-found,unused-ignore]

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # type: ignore[import-not-found,unused-ignore]

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
            import matplotlib  # type: ignore[import-not-found,unused-ignore]  # noqa: F401
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
    for s in skipped:
        print(f"skipped: {s}")
    if json_path:
        data = {"callsite": callsite.__version__, "python": sys.version.split()[0],
                "backend": callsite.get_backend(), "repeats": repeats,
                "import_ms": import_ms, "rows": [asdict(r) for r in rows], "skipped": skipped}
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
