"""The one timing harness, used by ``python -m callsite bench`` and by the repository's bench/
scripts alike.

A measured operation is a loop compiled from its statement (timeit's technique: no Python call
per iteration), calibrated to a target time per repeat, and run round-robin with the others of
its table for several repeats, so that a noisy moment hurts all of them alike. The cyclic
collector is off while timing. The minimum of the repeats is kept, because the noise of a
shared machine only ever adds time, and the repeats' spread is kept beside it as the noise:
(median − min) / min.
"""
from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import os
import re
import statistics
import sys
import textwrap
import time
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Iterator, Mapping

from .stacks import at_depth_in_fresh_thread

clock = time.perf_counter_ns
#: Calibration stops here: an operation this fast is timed over this many iterations.
MAX_ITERATIONS = 1 << 26


def noise(samples: Iterable[float]) -> float:
    """(median − min) / min of the samples: how far one run's repeats disagree."""
    s = list(samples)
    return (statistics.median(s) - min(s)) / min(s) if s and min(s) > 0 else 0.0


@dataclass
class Timing:
    """ns per operation of every repeat."""

    samples: list[float] = field(default_factory=list)

    @property
    def best(self) -> float:
        return min(self.samples)

    @property
    def noise(self) -> float:
        return noise(self.samples)


@contextlib.contextmanager
def collector_off() -> Iterator[None]:
    """One collection first, then none until the block ends: a collection is not the cost of
    what happens to trigger it."""
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def calibrate(run: Callable[[int], float], target_ns: float) -> int:
    """Iterations for about target_ns per run (run(n) times n iterations, in ns): n grows
    fourfold until a run takes a quarter of the target, then is scaled to it."""
    n = 1
    while (elapsed := run(n)) < target_ns / 4 and n < MAX_ITERATIONS:
        n *= 4
    return max(1, min(MAX_ITERATIONS, int(n * target_ns / max(elapsed, 1))))


def round_robin(run: Callable[[str, int], float], labels: Iterable[str], *, repeats: int,
                target_ns: float | None = None, iterations: int = 1) -> dict[str, Timing]:
    """ns per iteration of each label, where run(label, n) times n iterations (ns): each label
    calibrated to about target_ns per repeat (or run `iterations` times when target_ns is
    None), then all of them in turn, `repeats` times, with the collector off."""
    labels = list(labels)
    counts = {label: iterations if target_ns is None else
              calibrate(functools.partial(run, label), target_ns) for label in labels}
    timings = {label: Timing() for label in labels}
    with collector_off():
        for _ in range(repeats):
            for label in labels:
                timings[label].samples.append(run(label, counts[label]) / counts[label])
    return timings


def minima(timings: Mapping[str, Timing]) -> dict[str, float]:
    """Each label's minimum over its repeats: the figure a table reports."""
    return {label: t.best for label, t in timings.items()}


def time_at_depth(loops: dict[str, Callable[..., int]], depth: int, *, repeats: int,
                  target_ns: float, before: Mapping[str, Callable[[], object]] | None = None
                  ) -> dict[str, Timing]:
    """ns per iteration of each compiled loop (compile_statement's "loop"), each run in a new
    thread with its own frame the depth-th, so its statement sees exactly `depth` frames;
    before[label]() runs first in that thread."""
    before = before or {}

    def run(label: str, n: int) -> int:
        elapsed: int = at_depth_in_fresh_thread(depth, loops[label], n, clock,
                                                before=before.get(label))
        return elapsed

    return round_robin(run, loops, repeats=repeats, target_ns=target_ns)


# --- statements compiled into loops -------------------------------------------------------------

_LOOP = """\
def loop(_n, _clock=_clock):
    _t0 = _clock()
    for _ in _repeat(None, _n):
{body}
    return _clock() - _t0
def once(_clock=_clock):
    _t0 = _clock()
{once_body}
    _r = None
    return _clock() - _t0
def probe():
{once_body}
    return _r
"""


def compile_statement(stmt: str, namespace: dict[str, Any], name: str) -> dict[str, Any]:
    """`stmt` (which leaves its result in `_r` where one is wanted) compiled into three
    functions of a new module whose globals start as a copy of `namespace`: loop(n) times n
    runs; once() times one run, the result's deallocation included; probe() returns the
    result (to count its frames)."""
    dedented = textwrap.dedent(stmt).strip("\n")
    src = _LOOP.format(body=textwrap.indent(dedented, " " * 8),
                       once_body=textwrap.indent(dedented, " " * 4))
    return exec_as_module(src, {**namespace, "_clock": clock, "_repeat": itertools.repeat}, name)


_module_dir: str | None = None
_serial = itertools.count()


def exec_as_module(src: str, namespace: dict[str, Any], name: str) -> dict[str, Any]:
    """src run as a module written to a real .py file and registered in sys.modules, so that
    linecache, traceback and inspect.getmodule() treat its frames as user code (a "<string>"
    file name would make inspect.stack() scan every module on every call); its namespace."""
    global _module_dir
    if _module_dir is None:
        import atexit
        import shutil
        import tempfile

        _module_dir = tempfile.mkdtemp(prefix="callsite-bench-")
        atexit.register(shutil.rmtree, _module_dir, True)
    modname = "_callsite_bench_" + re.sub(r"\W+", "_", name).strip("_") + f"_{next(_serial)}"
    path = os.path.join(_module_dir, modname + ".py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(src)
    module = types.ModuleType(modname)
    module.__file__ = path
    module.__dict__.update(namespace)
    sys.modules[modname] = module
    exec(compile(src, path, "exec"), module.__dict__)
    return module.__dict__
