"""The benchmark result files under docs/_data/benchmarks/: loading, checking, describing.

Every file is one run of one bench/*.py script with ``--json`` (callsite/_cli/results.py's
``write_results``): ``{"bench": NAME, "meta": {...}, ...what NAME measured}``. The page's figures
and tables are drawn from them, so a file that lacks what they read is an error naming the file
and the field, not a gap in a plot.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: What every result file says about its run (callsite/_cli/results.py's run_metadata()).
META_FIELDS = ("date", "machine", "python", "callsite", "command")
MACHINE_FIELDS = ("cpu", "cores", "memory_gib", "load_average_at_start")

#: Per benchmark: the top-level fields the figures and tables read.
DATA_FIELDS = {
    "capture": ("tables",),
    "mlir": ("bindings", "depth", "ops"),
    "dsls": ("dsls", "measure"),
    "tracking": ("tax", "query"),
}


class ResultFileError(ValueError):
    """A result file the page cannot be drawn from."""


def _require(mapping: Any, fields: tuple[str, ...], where: str, path: Path) -> None:
    if not isinstance(mapping, dict):
        raise ResultFileError(f"{path}: {where} should be an object, got {type(mapping).__name__}")
    missing = [f for f in fields if f not in mapping]
    if missing:
        raise ResultFileError(f"{path}: {where} lacks {', '.join(missing)}")


def check_result(result: Any, path: Path) -> None:
    """Raises ResultFileError unless `result` has the metadata and the data its bench's
    figure needs."""
    _require(result, ("bench", "meta"), "the file", path)
    _require(result["meta"], META_FIELDS, "meta", path)
    _require(result["meta"]["machine"], MACHINE_FIELDS, "meta.machine", path)
    bench = result["bench"]
    if bench in DATA_FIELDS:
        _require(result, DATA_FIELDS[bench], f"a {bench!r} result", path)
    if bench == "capture":
        _require(result["tables"], ("capture",), "tables", path)


def python_key(result: dict) -> tuple[int, ...]:
    """Sorts runs by interpreter version, 3.10 after 3.9."""
    return tuple(int(p) for p in result["meta"]["python"].split(".")[:2] if p.isdigit())


def load_results(folder: Path) -> dict[str, list[dict]]:
    """bench name -> its runs (oldest Python first); each run's file is under "_path"."""
    if not folder.is_dir():
        raise ResultFileError(f"no benchmark results folder {folder}")
    by_bench: dict[str, list[dict]] = {}
    for path in sorted(folder.glob("*.json")):
        try:
            result = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as e:
            raise ResultFileError(f"{path}: not JSON ({e})") from None
        check_result(result, path)
        result["_path"] = path
        by_bench.setdefault(result["bench"], []).append(result)
    for runs in by_bench.values():
        runs.sort(key=python_key)
    return by_bench


def minor(result: dict) -> str:
    """"3.11" for a run on Python 3.11.x."""
    return ".".join(result["meta"]["python"].split(".")[:2])


def describe_machine(meta: dict) -> str:
    m = meta["machine"]
    load = m.get("load_average_at_start")
    load_text = f"load average {load[0]:.2f} at start" if load else "load average unknown"
    memory = f", {m['memory_gib']:g} GiB" if m.get("memory_gib") else ""
    return f"{m['cpu']}, {m['cores']} cores{memory}, {load_text}"


def describe_date(meta: dict) -> str:
    """The run's start as "2026-12-05 23:05 UTC" (the file keeps the ISO 8601 form)."""
    date = meta["date"]
    return f"{date[:10]} {date[11:16]} UTC" if len(date) >= 16 else date
