"""The benchmarks page's figures, drawn by matplotlib from the result files (benchmark_data.py).

``FIGURES`` maps a figure's name to (the bench whose runs it reads, what it shows, its drawing
function); ``draw(name, results, path)`` writes one PNG. Nothing here knows about Sphinx, so a
test can draw every figure from the committed files.
"""
from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Callable

import matplotlib

matplotlib.use("Agg")  # files only: no display on a build machine
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

from benchmark_data import below_clock, by_tracker, minor, ordered_union, runs_of  # noqa: E402

DPI = 110
# One colour per method or mode wherever it appears, so a reader can follow a line across panels.
PALETTE = plt.get_cmap("tab10").colors


def _colours(names: list[str]) -> dict[str, tuple]:
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(names)}


def _save(fig, path: Path, legend_from=(), ncol: int = 2) -> None:
    """The figure laid out, with one legend entry per label of the `legend_from` panels under
    them, where it hides no bar or line (savefig's tight box takes it in), into `path`."""
    fig.tight_layout()
    handles: dict[str, object] = {}
    for ax in legend_from:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(label, handle)
    if handles:
        fig.legend(handles.values(), handles.keys(), loc="upper center", ncol=ncol,
                   fontsize="small", bbox_to_anchor=(0.5, 0.0))
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    plt.close(fig)


def _log_y(ax) -> None:
    """A log y axis labelled in plain numbers (1000, not 10^3): readers compare values."""
    ax.set_yscale("log")
    plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:,.0f}" if v >= 1 else f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


def _grouped_bars(ax, groups: list[str], series: dict[str, list[float | None]],
                  colours: dict[str, tuple]) -> None:
    """Bars of every series side by side in each group; None leaves a gap."""
    width = 0.8 / max(len(series), 1)
    for i, (name, values) in enumerate(series.items()):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        pairs = [(x, v) for x, v in zip(xs, values) if v is not None]
        if pairs:
            ax.bar([x for x, _ in pairs], [v for _, v in pairs], width, label=name,
                   color=colours[name])
    ax.set_xticks(range(len(groups)), groups)
    ax.grid(axis="y", alpha=0.3)


def draw_capture(runs: list[dict], path: Path) -> None:
    """One panel per Python version: ns per capture against stack depth, log-log, a line per
    method (the peers a version has installed appear in its panel only)."""
    methods = ordered_union(
        [m for row in run["tables"]["capture"].values() for m, cell in row.items() if "ns" in cell]
        for run in runs)
    colours = _colours(methods)
    cols = min(len(runs), 2)  # the page's column is narrow: three panels a row shrink the text
    rows = -(-len(runs) // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols, 3.6 * rows), sharey=True,
                             squeeze=False)
    for ax, run in zip(axes.flat, runs):
        table = run["tables"]["capture"]
        depths = sorted(table, key=int)
        for method in methods:
            points = [(int(d), table[d][method]["ns"]) for d in depths
                      if "ns" in table[d].get(method, {})]
            if points:
                ax.plot(*zip(*points), marker="o", color=colours[method], label=method)
        ax.set(xscale="log", title=f"Python {minor(run)}", xlabel="stack depth (frames)")
        _log_y(ax)
        ax.set_xticks([int(d) for d in depths], depths)
        ax.xaxis.set_minor_locator(matplotlib.ticker.NullLocator())
        ax.grid(which="both", alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("ns per capture (wall time, warm)")
    for ax in list(axes.flat)[len(runs):]:
        ax.set_visible(False)
    _save(fig, path, axes.flat)


def draw_mlir(runs: list[dict], path: Path) -> None:
    """Per Python version and bindings: ns per op in each mode (top), and what the location
    adds over Location.unknown() (bottom, log scale)."""
    groups = [(f"{minor(run)}\n{name.split('.')[0]}", measured["ops_ns"])
              for run in runs for name, measured in run["bindings"].items() if "ops_ns" in measured]
    modes = ordered_union(ops for _, ops in groups)
    baseline = modes[0]
    colours = _colours(modes)
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(8.5, 7.5), sharex=True)
    labels = [label for label, _ in groups]
    _grouped_bars(top, labels, {m: [ops.get(m) for _, ops in groups] for m in modes}, colours)
    top.set(ylabel="ns per op", title="build time per op (wall time, warm)")
    added = {m: [(ops[m] - ops[baseline]) if m in ops and ops[m] > ops[baseline] else None
                 for _, ops in groups] for m in modes[1:]}
    _grouped_bars(bottom, labels, added, colours)
    _log_y(bottom)
    bottom.set(ylabel="ns per op over " + baseline.split(" ", 1)[-1],
               title="what the location adds (log scale)")
    _save(fig, path, [top])


DSL_MODES = {"none": "(a) no locations", "own": "(b) the DSL's own", "mlir": "(c) MLIR loc_tracebacks()",
             "callsite": "(d) callsite"}


def _dsl_label(d: dict, measure: str, python: str) -> str:
    """The DSL and its Python; one whose callsite part the clock does not resolve says so."""
    share = below_clock(d, measure)
    return f"{d['label']}\n(Python {python})" + (
        "" if share is None else f"\ncallsite +{share:.1%}:\nbelow the clock")


def draw_dsls(runs: list[dict], path: Path) -> None:
    """Per DSL: build time (or instructions) in each mode relative to no locations."""
    entries = [(d, run["measure"], minor(run)) for run in runs for d in run["dsls"].values()]
    colours = _colours(list(DSL_MODES.values()))
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * len(entries)), 4.2))
    series = {label: [] for label in DSL_MODES.values()}
    for d, measure, _ in entries:
        values = d.get(measure, {})
        for mode, label in DSL_MODES.items():
            v, none = values.get(mode), values.get("none")
            series[label].append(v / none if v is not None and none else None)
    _grouped_bars(ax, [_dsl_label(*entry) for entry in entries], series, colours)
    for i, (d, _, _) in enumerate(entries):
        if "skipped" in d:
            ax.text(i, 1.0, "not measured:\n" + d["skipped"][:60], ha="center", va="bottom",
                    fontsize="x-small", wrap=True)
    ax.axhline(1.0, color="grey", lw=0.8)
    ax.set_ylabel("build cost / build without locations" + (
        "\n(CPU time, warm)" if all(m == "seconds_per_build" for _, m, _ in entries) else ""))
    low = min((v for vs in series.values() for v in vs if v is not None), default=1.0)
    ax.set_ylim(bottom=min(0.9, low * 0.95))
    ax.legend(fontsize="small", loc="upper left")
    _save(fig, path)


TRACKER_ROLES = {"callsite": "callsite (C)", "lean": "lean Python tracker",
                 "plain": "plain Python tracker"}


def draw_tracking(runs: list[dict], path: Path) -> None:
    """One panel per tracking mode: ns added per recorded call, per Python version and
    workload, callsite against the two pure-Python trackers."""
    modes = ordered_union([r["mode"] for r in run["tax"]] for run in runs)
    colours = _colours(list(TRACKER_ROLES.values()))
    fig, axes = plt.subplots(len(modes), 1, figsize=(8.5, 3.8 * len(modes)), squeeze=False)
    for ax, mode in zip(axes[:, 0], modes):
        records = [(run, r) for run in runs for r in run["tax"] if r["mode"] == mode]
        groups = [f"{minor(run)}\n" + textwrap.fill(r["workload"].split(" (")[0], 12)
                  for run, r in records]
        series = {role: [by_tracker(r["tax_ns"]).get(kind) for _, r in records]
                  for kind, role in TRACKER_ROLES.items()}
        _grouped_bars(ax, groups, series, colours)
        values = [v for vs in series.values() for v in vs if v and v > 0]
        # The plain profile tracker costs orders of magnitude more than callsite: a linear axis
        # would flatten callsite's bars to nothing. Within one order of magnitude, linear reads
        # better.
        wide = bool(values) and max(values) / min(values) > 30
        if wide:
            _log_y(ax)
        ax.set_title(f"{mode} mode")
        ax.set_ylabel("ns added per recorded call" + (" (log scale)" if wide else ""))
        ax.tick_params(axis="x", labelsize="small")
    _save(fig, path, axes[:, 0], ncol=3)


FIGURES: dict[str, tuple[str, str, Callable[[list[dict], Path], None]]] = {
    "capture": ("capture", "Capture cost against stack depth, per Python version and peer "
                "(log-log; lower is better).", draw_capture),
    "mlir": ("mlir", "A source location per MLIR op, per Python version, bindings and mode.",
             draw_mlir),
    "dsls": ("dsls", "Real DSLs: one design's build cost per location mode, relative to no "
             "locations.", draw_dsls),
    "tracking": ("tracking", "Tracked windows: the tax per recorded call, callsite against "
                 "pure-Python trackers.", draw_tracking),
}


def draw(name: str, results: dict[str, list[dict]], path: Path) -> list[dict]:
    """Draws figure `name` into `path` (PNG); returns the runs it was drawn from."""
    runs = runs_of("figure", FIGURES, name, results)
    FIGURES[name][2](runs, path)
    return runs
