# bench/_callgrind.py — the one way the bench scripts count instructions under callgrind.
"""Every count is a child process run under ``valgrind --tool=callgrind`` with a fixed hash
seed and one BLAS thread (numpy, which MLIR's bindings import, would otherwise spin in the
background and land in the totals at random). Two methods:

- :func:`per_iteration`: the whole process twice, with n1 and n2 iterations of the measured
  loop. Start-up, imports and the harness are identical in both runs, so
  (Ir(n2) − Ir(n1)) / (n2 − n1) is one iteration.
- :func:`count` with ``toggle``: one run that collects only inside a function, by default
  :data:`TOGGLE` (CPython's ``sys.call_tracing``, sysmodule.c), which the child calls around
  the measured part; with ``dump_after`` each call is a part file of its own
  (:func:`part_totals`).
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from typing import Callable, Sequence

#: The one function callgrind collects in when a child wraps its measured part in
#: sys.call_tracing(fn, args): start-up, imports and warm-up are not counted.
TOGGLE = "sys_call_tracing"

ENV = {"PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}

_COLLECTED = re.compile(r"Collected : (\d+)")


class CallgrindError(RuntimeError):
    """A child that failed under callgrind; the message ends with its last lines of stderr."""


def _failure(what: str, stderr: str) -> CallgrindError:
    tail = "\n".join(stderr.strip().splitlines()[-5:])
    return CallgrindError(f"{what}:\n{tail}")


def missing() -> str | None:
    """Why nothing can be counted here, or None."""
    return None if shutil.which("valgrind") else "valgrind not found (apt-get install valgrind)"


def command(argv: Sequence[str], *, out: str = "/dev/null", toggle: str | None = None,
            dump_after: bool = False, extra: Sequence[str] = ()) -> list[str]:
    """valgrind's command line around `argv`; `extra`: further callgrind options (such as
    --dump-instr=yes, for an annotator of the kept file)."""
    cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
    if toggle:
        cmd += ["--collect-atstart=no", f"--toggle-collect={toggle}"]
        if dump_after:
            cmd.append(f"--dump-after={toggle}")
    return cmd + list(extra) + list(argv)


def child_env(env: dict | None = None) -> dict:
    return {**(os.environ if env is None else env), **ENV}


def count(argv: Sequence[str], *, env: dict | None = None, cwd: str | None = None,
          **options) -> tuple[int, str]:
    """Runs `argv` under callgrind (options as :func:`command`'s): its instructions collected
    and its standard output."""
    done = subprocess.run(command(argv, **options), capture_output=True, text=True,
                          env=child_env(env), cwd=cwd)
    collected = _COLLECTED.search(done.stderr.replace(",", ""))
    if done.returncode or not collected:
        raise _failure(f"{' '.join(argv)} failed under callgrind", done.stderr)
    return int(collected.group(1)), done.stdout


def start(argv: Sequence[str], *, env: dict | None = None, **options) -> subprocess.Popen:
    """:func:`count`'s run started in the background (runs of different modes side by side);
    :func:`wait` for it."""
    return subprocess.Popen(command(argv, **options), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True, env=child_env(env))


def wait(process: subprocess.Popen, what: str) -> None:
    _, err = process.communicate()
    if process.returncode:
        raise _failure(f"callgrind run of {what} failed", err)


def per_iteration(argv_of: Callable[[int], Sequence[str]], n1: int, n2: int, *,
                  units: Callable[[int], int] = lambda n: n,
                  out_of: Callable[[int], str] | None = None, **options) -> float:
    """Instructions per unit of work: argv_of(n) runs n iterations, units(n) is the work they
    do (n itself, or e.g. the calls of fib(n)); out_of(n) names a file to keep."""
    totals = [count(argv_of(n), out=out_of(n) if out_of else "/dev/null", **options)[0]
              for n in (n1, n2)]
    return (totals[1] - totals[0]) / (units(n2) - units(n1))


def file_total(path: str) -> int:
    """The total instructions a callgrind file records."""
    with open(path) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise CallgrindError(f"{path}: no totals line")


def part_totals(out: str, parts: int) -> list[int]:
    """Totals of the part files `--dump-after` wrote (OUT.1 … OUT.parts), in order."""
    return [file_total(f"{out}.{i}") for i in range(1, parts + 1)]

