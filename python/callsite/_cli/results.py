"""Result files: one schema for every ``--json`` a benchmark writes, ``python -m callsite bench``
and the bench/ scripts alike::

    {"bench": NAME, "meta": {...the run...}, ...what NAME measured}

``meta``: ``date`` (UTC, ISO 8601, when the benchmark started) and ``finished``; ``machine``
(``cpu`` model, ``cores``, ``memory_gib``, ``load_average_at_start``); ``python``; ``callsite``
(the version imported); ``commit`` (the checkout measured, ``-dirty`` when its tracked files
differ from it; null for an installed package); ``command`` (the command line as typed, with
``PYTHONPATH`` when it is set). docs/_ext/benchmark_data.py checks it when the docs are built.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from typing import Any



def start() -> tuple[float, tuple[float, float, float] | None]:
    """The run's start: the time, and the load average then. The load the run started under
    tells a reader how far to trust its numbers; by the time the results are written the run
    itself has raised it."""
    return time.time(), os.getloadavg() if hasattr(os, "getloadavg") else None


# Taken when the benchmark imports this module, unless it passes its own start.
_START = start()


def cpu_model() -> str:
    """The processor's model name (Linux's /proc/cpuinfo), else what platform knows."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown"


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)  # the line is in kiB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _command_line() -> str:
    # The interpreter's own argv, as typed; PYTHONPATH picks which callsite build ran, so it
    # belongs to the command.
    argv = getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv]
    pythonpath = os.environ.get("PYTHONPATH")
    return (f"PYTHONPATH={shlex.quote(pythonpath)} " if pythonpath else "") + shlex.join(argv)


def _commit(checkout: str) -> str | None:
    """The checkout's commit, with "-dirty" when its tracked files differ from it."""
    try:
        head = subprocess.run(["git", "-C", checkout, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=30)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "-C", checkout, "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _iso(t: float) -> str:
    return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="seconds")


Start = tuple[float, tuple[float, float, float] | None]


def run_metadata(checkout: str | None = None, started: Start | None = None) -> dict[str, Any]:
    """The "meta" of a result file (this module's docstring); `checkout`: the source tree the
    measured callsite was built from, when there is one; `started`: start() when the run began
    (default: when this module was imported)."""
    from .._version import __version__

    at, load = started or _START
    return {
        "date": _iso(at),
        "finished": _iso(time.time()),
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "memory_gib": _memory_gib(),
            "load_average_at_start": [round(x, 2) for x in load] if load else None,
        },
        "python": platform.python_version(),
        "callsite": __version__,
        "commit": _commit(checkout) if checkout else None,
        "command": _command_line(),
    }


def write_results(path: str, bench: str, data: dict[str, Any], checkout: str | None = None,
                  started: Start | None = None) -> None:
    """One benchmark's results with the run's metadata, into `path` ("-": standard output)."""
    text = json.dumps({"bench": bench, "meta": run_metadata(checkout, started), **data},
                      indent=1, default=str)
    if path == "-":
        print(text)
        return
    with open(path, "w", encoding="utf-8") as f:
        f.write(text + "\n")


def result_path(path: str) -> str:
    """argparse type of --json: "-" or a file whose folder exists and is writable, checked before
    a run of minutes rather than when its results are written."""
    if path == "-":
        return path
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"expected a file name, got the directory {path!r}")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder of {path!r} does not exist ({folder})")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write into the folder of {path!r} ({folder})")
    return path
