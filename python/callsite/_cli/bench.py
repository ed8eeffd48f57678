"""``python -m callsite bench``: a short benchmark of what callsite costs, against the peers
that are installed here, as one table of ratios measured in the same run.

Groups, each with its own baseline row (ratio 1.00): the import itself; capture at stack
depth 20 twice — on a stack that is reused between captures, and on a fresh stack built for
each capture (callsite's two walks, ``sys._getframe``, ``traceback``, jaxlib and torch when
installed); a location per MLIR op (``Location.unknown()``, MLIR's ``loc_tracebacks()``,
``callsite.mlir.auto_locations``, when bindings are installed); tracked call windows (the tax
per recorded call of each mode, and the window's query against a filtered walk). The timing is
the harness of the repository's bench/ scripts (timing.py): every number is the minimum over
interleaved repeats, beside their noise. The full benchmarks, with more depths and peers, are
in the repository's bench/ directory.

Why two capture groups: since 3.11 CPython creates a frame's Python object
(``PyFrameObject``) only when something asks for it, and ``sys._getframe()`` / ``f_back``
ask for one per frame. On a reused stack those objects exist after the first walk, so a
``sys._getframe`` loop only reads them; on a fresh stack it allocates one per frame, every
time. callsite reads the interpreter's frames and allocates no frame object, so its cost is
the same on both. A real DSL is in between: its outer frames persist, the innermost few are
new for every op.
"""
from __future__ import annotations

import functools
import importlib
import itertools
import os
import re
import subprocess
import sys
import textwrap
from dataclasses import asdict, dataclass
from types import FrameType
from typing import Any, Callable, Mapping

from .peers import Peer
from .results import write_results
from .stacks import call_at_depth
from .tables import fmt_noise, fmt_ns, fmt_ratio, markdown_table
from .timing import Timing, clock, compile_statement, round_robin, time_at_depth

DEPTH = 20
IMPORT_TARGET_MS = 3.0
TARGET_NS = 4e6  # per repeat of a calibrated loop


@dataclass
class Row:
    group: str
    method: str
    value: float  # ns per operation; ms for the import group
    unit: str
    noise: float | None = None  # (median − min) / min over the repeats
    ratio: float | None = None  # value / the group's baseline value


class Progress:
    """One line per step on stderr, so a slow step is visibly still running."""

    def __init__(self, total: int) -> None:
        self.total, self.done = total, 0

    def step(self, label: str) -> None:
        self.done += 1
        print(f"[{self.done:2}/{self.total}] {label} ...", file=sys.stderr, flush=True)


# --- timing -------------------------------------------------------------------------------------

def _frames_above(frame: FrameType | None) -> int:
    """How many frames the stack holds from `frame` outwards, `frame` included."""
    n = 0
    while frame is not None:
        n += 1
        frame = frame.f_back
    return n


def _optional(module: str) -> Any:
    """An optional peer's module (ImportError when it is not installed). Imported by name:
    peers ship without type information, and a type checker must not follow them."""
    return importlib.import_module(module)


def time_statements(stmts: dict[str, str], namespace: dict[str, Any], *, repeats: int,
                    before: Mapping[str, Callable[[], object]] | None = None) -> dict[str, Timing]:
    """ns per run of each statement with exactly DEPTH frames on the stack."""
    loops = {label: compile_statement(stmt, namespace, label)["loop"]
             for label, stmt in stmts.items()}
    return time_at_depth(loops, DEPTH, repeats=repeats, target_ns=TARGET_NS, before=before)


def time_on_fresh_stacks(fns: dict[str, Callable[[], Any]], *, repeats: int) -> dict[str, Timing]:
    """ns per call of each fn, each call on a stack of DEPTH frames built for it alone (fn's
    frame the innermost), net of building that stack: the same loop calling an empty function
    is subtracted from every repeat."""
    def empty() -> None:
        return None

    def loop_for(fn: Callable[[], Any]) -> Callable[[int], int]:
        def descend(n: int) -> Any:
            return descend(n - 1) if n > 0 else fn()

        def loop(n: int) -> int:
            # Frames when fn runs: the loop's and those above it, descend()'s, fn's own.
            levels = max(DEPTH - _frames_above(sys._getframe()) - 2, 0)
            t0 = clock()
            for _ in itertools.repeat(None, n):
                descend(levels)
            return clock() - t0

        return loop

    loops = {label: loop_for(fn) for label, fn in {**fns, "": empty}.items()}
    timed = round_robin(lambda label, n: loops[label](n), loops, repeats=repeats,
                        target_ns=TARGET_NS)
    stack = timed.pop("").best
    return {label: Timing([max(t - stack, 0.0) for t in timing.samples])
            for label, timing in timed.items()}


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


REUSED = f"capture, depth {DEPTH}, stack reused (frames exist before the capture)"
FRESH = f"capture, depth {DEPTH}, fresh stack per capture (net of building the stack)"
GETFRAME = "sys._getframe loop collecting (f_code, f_lasti)"
INTERNAL = "callsite.capture() (internal walk)"
PUBLIC = "callsite.capture() (public C API walk)"
GETFRAME_LOOP = """
f = sys._getframe()
r = []
while f is not None:
    r.append((f.f_code, f.f_lasti))
    f = f.f_back
"""


def _getframe_walk() -> list[tuple[Any, int]]:
    """What a Python tool writes without callsite: the stack as (code, instruction offset)."""
    f: FrameType | None = sys._getframe()
    r = []
    while f is not None:
        r.append((f.f_code, f.f_lasti))
        f = f.f_back
    return r


def _skipped(peer: Peer, skipped: list[str]) -> bool:
    if peer.available():
        return False
    skipped.append(f"{peer.name}: {peer.reason}")
    return True


JAXLIB = Peer("jaxlib", lambda: {"jax_tb": _optional("jaxlib.xla_client").Traceback})
TORCH = Peer("torch", lambda: {"torch_tb": _optional("torch.utils._traceback").CapturedTraceback})


def capture_group(repeats: int, skipped: list[str], progress: Progress) -> list[Row]:
    import traceback

    import callsite

    progress.step(f"capture at depth {DEPTH}, reused and fresh stacks: callsite, "
                  "sys._getframe, traceback, peers")
    ns: dict[str, Any] = {"callsite": callsite, "sys": sys, "traceback": traceback}
    stmts = {INTERNAL: "callsite.capture()", PUBLIC: "callsite.capture()",
             GETFRAME: GETFRAME_LOOP, "traceback.extract_stack()": "traceback.extract_stack()"}
    fresh: dict[str, Callable[[], Any]] = {
        INTERNAL: lambda: callsite.capture(),
        GETFRAME: _getframe_walk,
        "traceback.extract_stack()": lambda: traceback.extract_stack(),
    }
    if not _skipped(JAXLIB, skipped):
        jax_tb = ns["jax_tb"] = JAXLIB.ns["jax_tb"]  # type: ignore[index]
        stmts["jaxlib Traceback.get_traceback()"] = "jax_tb.get_traceback()"
        fresh["jaxlib Traceback.get_traceback()"] = lambda: jax_tb.get_traceback()
    if not _skipped(TORCH, skipped):
        torch_tb = ns["torch_tb"] = TORCH.ns["torch_tb"]  # type: ignore[index]
        stmts["torch CapturedTraceback.extract()"] = "torch_tb.extract()"
        fresh["torch CapturedTraceback.extract()"] = lambda: torch_tb.extract()
    in_use = callsite.get_backend()
    # The backend is chosen in each timed thread: the two callsite rows alternate with the rest.
    backends = {INTERNAL: lambda: callsite.set_backend(in_use),
                PUBLIC: lambda: callsite.set_backend("public")}
    try:
        reused = time_statements(stmts, ns, repeats=repeats, before=backends)
    finally:
        callsite.set_backend(in_use)
    on_fresh = time_on_fresh_stacks(fresh, repeats=repeats)
    if in_use != "internal":
        skipped.append(f"the internal walk: in use is {in_use!r} "
                       f"({callsite.internal_backend_refusal() or 'selected'})")
    return ([Row(REUSED, k, t.best, "ns", t.noise) for k, t in reused.items()]
            + [Row(FRESH, k, t.best, "ns", t.noise) for k, t in on_fresh.items()])


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

        def run(label: str, n: int) -> int:
            with scopes[label]():
                t0 = clock()
                for _ in range(n):
                    call_at_depth(DEPTH, build)
                return (clock() - t0) // ops

        timed = round_robin(run, scopes, repeats=repeats)
    return [Row("MLIR op with a location, depth 20", k, t.best, "ns/op", t.noise)
            for k, t in timed.items()]


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
    skipped += [f"tracking mode {m}: {why}" for m, why in modes.items() if why is not None]
    scopes: dict[str, Callable[[], Any]] = {"tracking off: a Python call": lambda: _nothing()}
    usable: list[Any] = [m for m, why in modes.items() if why is None]  # enable()'s mode names
    for mode in usable:
        scopes[f"tracking on ({mode}): a Python call"] = functools.partial(
            tracking.enable, mode=mode, window=8)

    def run(label: str, n: int) -> int:
        with scopes[label]():
            t0 = clock()
            _calls(n)
            return clock() - t0

    tax = round_robin(run, scopes, repeats=repeats, iterations=20_000)
    here = callsite.Filter()
    here.exclude_file(__file__)
    ns = {"tracking": tracking, "here": here}
    queries = {"Filter.first_user_frame() (a walk)": "here.first_user_frame()",
               "tracking.last(filter) (the window)": "tracking.last(here)"}
    # The window is the calling thread's: each timed thread turns tracking on for itself.
    on = {label: lambda: tracking.enable(window=8) for label in queries}
    try:
        query = time_statements(queries, ns, repeats=repeats, before=on)
    finally:
        tracking.disable()
    return ([Row("tracked windows", k, t.best, "ns", t.noise) for k, t in tax.items()]
            + [Row("query: the most recent user frame", k, t.best, "ns", t.noise)
               for k, t in query.items()])


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


# --- output -------------------------------------------------------------------------------------

def with_ratios(rows: list[Row]) -> list[Row]:
    """Each row's ratio to the first row of its group."""
    base: dict[str, float] = {}
    for r in rows:
        base.setdefault(r.group, r.value)
        r.ratio = r.value / base[r.group] if base[r.group] > 0 else None
    return rows


def table(rows: list[Row]) -> str:
    """One markdown table per group, its first row the baseline of its ratios."""
    out = []
    for group, grouped in itertools.groupby(rows, key=lambda r: r.group):
        members = list(grouped)
        cells = [(r.method, f"{r.value:.2f}" if r.unit == "ms" else fmt_ns(r.value),
                  fmt_ratio(r.ratio), fmt_noise(r.noise)) for r in members]
        header = ("method", members[0].unit, "ratio", "noise")
        out.append(f"{group}:\n\n" + markdown_table(header, cells))
    return "\n\n".join(out)


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
    print(f"\ncallsite {callsite.__version__}, Python {sys.version.split()[0]}: min of {repeats} "
          "interleaved repeats, gc off; ratio = time / the group's first row; noise = "
          "(median − min) / min of the repeats\n")
    print(table(rows))
    verdict = "within" if import_ms <= IMPORT_TARGET_MS else "OVER"
    print(f"\nimport callsite: {import_ms:.2f} ms, {verdict} the {IMPORT_TARGET_MS:g} ms target")
    note = getframe_note(rows)
    if note:
        print("\n" + note)
    for s in skipped:
        print(f"skipped: {s}")
    if json_path:
        write_results(json_path, "quick", {
            "backend": callsite.get_backend(), "repeats": repeats, "import_ms": import_ms,
            "rows": [asdict(r) for r in rows], "skipped": skipped})
    if plot_path:
        plot(rows, plot_path)
        print(f"plot: {plot_path}")
    return 0
