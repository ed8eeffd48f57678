"""The benchmark result files under docs/_data/benchmarks/: loading, checking, describing.

Every file is one run of one bench/*.py script with ``--json`` (callsite/_cli/results.py's
``write_results``): ``{"bench": NAME, "meta": {...}, ...what NAME measured}``. The page's figures
and tables are drawn from them, so a file that lacks what they read is an error naming the file
and the field, not a gap in a plot.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable

#: Per bench: dotted paths of the data its figures and tables read, a parent before its fields.
#: (Every file's "meta" is callsite/_cli/results.py's, which writes all of its fields.)
PER_BENCH = {
    "capture": ("tables", "tables.capture"),
    "mlir": ("bindings",),
    "dsls": ("dsls", "measure"),
    "tracking": ("tax", "query"),
    "interp": ("forms",),
}

#: bench_dsls.py's CPU time per build does not resolve a difference below this share of a build
#: on the benchmark machine (docs/benchmarks.md, "Real DSLs"; bench/readme_costs.py's too).
DSL_CLOCK_RESOLUTION = 0.05


class ResultFileError(ValueError):
    """A result file the page cannot be drawn from."""


def check_result(result: Any, path: Path) -> None:
    """Raises ResultFileError unless `result` has the metadata and the data its bench's
    figure needs."""
    bench = result.get("bench") if isinstance(result, dict) else None
    for field in ("bench", "meta", *PER_BENCH.get(bench, ())):
        *parents, name = field.split(".")
        where = result
        for parent in parents:
            where = where[parent]
        if not isinstance(where, dict):
            raise ResultFileError(f"{path}: {'.'.join(parents) or 'the file'} should be an "
                                  f"object, got {type(where).__name__}")
        if name not in where:
            raise ResultFileError(f"{path}: {'.'.join(parents) or 'the file'} lacks {name}")


def python_key(result: dict) -> tuple[int, ...]:
    """Sorts runs by interpreter version, 3.10 after 3.9."""
    return tuple(int(p) for p in minor(result).split(".") if p.isdigit())


def load_results(folder: Path) -> dict[str, list[dict]]:
    """bench name -> its runs (oldest Python first); each run's file is under "_path"."""
    if not folder.is_dir():
        raise ResultFileError(f"no benchmark results folder {folder}")
    by_bench: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.json")):
        result = load_result(path)
        by_bench.setdefault(result["bench"], []).append(result)
    for runs in by_bench.values():
        runs.sort(key=python_key)
    return by_bench


def load_result(path: Path) -> dict:
    """One result file, checked; its path under "_path"."""
    try:
        result = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise ResultFileError(f"{path}: not a JSON file ({e})") from None
    check_result(result, path)
    result["_path"] = path
    return result


def runs_of(kind: str, registry: dict, name: str, results: dict[str, list[dict]]) -> list[dict]:
    """The runs a figure or table (`kind`) named `name` reads: its registry entry's first item
    is its bench ("" for every file's)."""
    if name not in registry:
        raise ValueError(f"unknown benchmark {kind} {name!r}; known: {', '.join(registry)}")
    bench = registry[name][0]
    if bench and not results.get(bench):
        raise ValueError(f"{kind} {name!r} has no {bench!r} result files to read")
    return results.get(bench, [])


def ordered_union(lists: Iterable[Iterable[str]]) -> list[str]:
    """Every name of the lists once, in order of first appearance."""
    return list(dict.fromkeys(name for names in lists for name in names))


def minor(result: dict) -> str:
    """"3.11" for a run on Python 3.11.x."""
    return ".".join(result["meta"]["python"].split(".")[:2])


def by_tracker(tax_ns: dict[str, float]) -> dict[str, float]:
    """bench_tracking's taxes by tracker: its names are "callsite MODE (C)", "lean MODE
    (Python)", "plain MODE (Python)"."""
    return {name.split()[0]: value for name, value in tax_ns.items()}


def below_clock(dsl: dict, measure: str) -> float | None:
    """callsite's share of a DSL's build when the clock does not resolve it (CPU time only)."""
    values = dsl.get(measure, {})
    none, ours = values.get("none"), values.get("callsite")
    if measure != "seconds_per_build" or not none or ours is None:
        return None
    share = (ours - none) / none
    return share if share < DSL_CLOCK_RESOLUTION else None


def describe_machine(meta: dict) -> str:
    """Every page's file records the memory and the load (tests/docs checks it)."""
    m = meta["machine"]
    return (f"{m['cpu']}, {m['cores']} cores, {m['memory_gib']:g} GiB, "
            f"load average {m['load_average_at_start'][0]:.2f} at start")


def describe_date(meta: dict) -> str:
    """The run's start as "2026-12-05 23:05 UTC" (the file keeps the ISO 8601 form)."""
    date = meta["date"]
    return f"{date[:10]} {date[11:16]} UTC" if len(date) >= 16 else date
