# bench/_timing.py — shared benchmark helpers: exact-depth stacks, min-of-repeats timing, peers, tables.
"""Helpers every bench/*.py may reuse.

- Stacks of an exact depth: `run_in_fresh_thread` starts a thread whose first Python frame is
  the entry function (a `_thread` thread has no bootstrap frames), and `call_at_depth` recurses
  so that the called function runs with exactly `depth` Python frames on the stack — the
  measured frames really are there, nothing is simulated.
- Timing: statements are compiled into loop functions (timeit's technique, so no extra Python
  call per iteration), calibrated, and run round-robin for several repeats; the minimum is
  kept (the noise on a shared 2-core machine only ever adds time). Nothing is subtracted: the
  loop overhead is measured as its own row where a benchmark wants it.
- Peers: `Peer` probes a competitor once; an unavailable one is skipped with a printed reason.
- Tables: markdown tables of ns and ratios against a baseline row measured in the same run.
"""
from __future__ import annotations

import _thread
import argparse
import atexit
import datetime
import gc
import itertools
import json
import math
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import types
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

clock = time.perf_counter_ns


# --- stacks of an exact depth -----------------------------------------------------------------

def stack_depth(skip: int = 0) -> int:
    """Python frames on the calling thread's stack, counting the caller (minus `skip`)."""
    f = sys._getframe(1 + skip)
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


def _descend(remaining, fn, args):
    # One real frame per level; the recursion is the stack being measured.
    if remaining > 0:
        return _descend(remaining - 1, fn, args)
    return fn(*args)


def call_at_depth(depth: int, fn: Callable, *args):
    """Calls fn(*args) so that fn's frame is the `depth`-th frame of the stack (outermost = 1)."""
    here = stack_depth(1)  # frames of our caller's stack, caller included
    # call_at_depth is at here+1, the first _descend at here+2, fn at here+3+remaining.
    remaining = depth - here - 3
    if remaining < 0:
        raise ValueError(f"depth {depth} is shallower than the harness itself ({here + 3} frames)")
    return _descend(remaining, fn, args)


class ThreadResult:
    """Handed to a fresh thread's entry function as its first argument: call set(value)."""

    __slots__ = ("_box", "_done", "__weakref__")

    def __init__(self, box: list, done):
        self._box, self._done = box, done

    def set(self, value: Any) -> None:
        # Releases the waiter now: an exception's traceback may keep this object alive in a
        # cycle (gc is off while timing), so its death cannot be the only signal.
        if not self._box:
            self._box.append(value)
            self._done.release()


def run_in_fresh_thread(entry: Callable, *args, timeout: float = 3600.0):
    """Runs entry(result, *args) as the first and only frame of a new thread; returns the value
    it passed to result.set() (re-raised if it is an exception). An entry that dies without
    calling set() is noticed through the death of `result` (freed with the thread's arguments),
    so a failing entry cannot hang us."""
    box: list = []
    done = _thread.allocate_lock()
    done.acquire()

    def died(_ref):
        if not box:
            done.release()

    result = ThreadResult(box, done)
    ref = weakref.ref(result, died)
    _thread.start_new_thread(entry, (result, *args))
    del result
    if not done.acquire(timeout=timeout):
        raise TimeoutError("benchmark thread did not finish")
    del ref
    if not box:
        raise RuntimeError(f"{getattr(entry, '__name__', entry)} failed in its thread (see stderr)")
    value = box[0]
    if isinstance(value, BaseException):
        raise value
    return value


def fresh_function(fn: types.FunctionType) -> types.FunctionType:
    """A copy of fn with a new code object (no co_extra, never seen by any cache)."""
    return types.FunctionType(fn.__code__.replace(), fn.__globals__, fn.__name__,
                              fn.__defaults__, fn.__closure__)


# --- compiled statements ------------------------------------------------------------------------

def compile_stmt(stmt: str, namespace: dict, name: str) -> dict:
    """Compiles `stmt` (which leaves its result in `_r`) into three functions of a new module
    (a real file; its globals start as a copy of `namespace`): loop(n, clock) times n runs;
    once(clock) times one run, the result's deallocation included; probe() returns the
    result (to count frames)."""
    body = textwrap.indent(textwrap.dedent(stmt).strip("\n"), "        ")
    once_body = textwrap.indent(textwrap.dedent(stmt).strip("\n"), "    ")
    src = (
        "def loop(_n, _clock):\n"
        "    _t0 = _clock()\n"
        "    for _ in _repeat(None, _n):\n"
        f"{body}\n"
        "    return _clock() - _t0\n"
        "def once(_clock):\n"
        "    _t0 = _clock()\n"
        f"{once_body}\n"
        "    _r = None\n"
        "    return _clock() - _t0\n"
        "def probe():\n"
        f"{once_body}\n"
        "    return _r\n"
    )
    return _exec_as_module(src, namespace, name)


_MODULE_DIR: str | None = None


def _exec_as_module(src: str, namespace: dict, name: str) -> dict:
    """Runs src as a module written to a real .py file and registered in sys.modules, so that
    linecache, traceback and inspect.getmodule() treat its frames like user code (a synthetic
    "<string>" filename would make inspect.stack() scan every module on every call)."""
    global _MODULE_DIR
    if _MODULE_DIR is None:
        _MODULE_DIR = tempfile.mkdtemp(prefix="callsite-bench-")
        atexit.register(shutil.rmtree, _MODULE_DIR, True)
    modname = "_callsite_bench_" + re.sub(r"\W+", "_", name).strip("_") + f"_{next(_serial)}"
    path = os.path.join(_MODULE_DIR, modname + ".py")
    with open(path, "w") as f:
        f.write(src)
    module = types.ModuleType(modname)
    module.__file__ = path
    module.__dict__.update(namespace)
    module.__dict__["_repeat"] = itertools.repeat
    sys.modules[modname] = module
    exec(compile(src, path, "exec"), module.__dict__)
    return module.__dict__


_serial = itertools.count()


# --- timing ---------------------------------------------------------------------------------

@dataclass
class Timing:
    """Best (minimum) ns per operation over the repeats, with every repeat kept."""

    best: float
    repeats: list[float] = field(default_factory=list)

    @property
    def spread(self) -> float:
        """(median - min) / min: how noisy this measurement was."""
        s = sorted(self.repeats)
        return (s[len(s) // 2] - s[0]) / s[0] if s and s[0] > 0 else 0.0


# Public: benchmarks define helper functions (new frames per capture) in real files too.
exec_as_module = _exec_as_module

def _loop_entry(result, depth, loop, n, before):
    try:
        if before:
            before()
        # The loop's own frame is the depth-th: its statement sees exactly `depth` frames.
        result.set(call_at_depth(depth, loop, n, clock))
    except BaseException as e:  # handed back to the caller, re-raised there
        result.set(e)


def time_loops(loops: dict[str, Callable[[int, Callable], int]], depth: int, *, repeats: int = 7,
               target_s: float = 0.02, before: dict[str, Callable] | None = None,
               disable_gc: bool = True) -> dict[str, Timing]:
    """ns per iteration of each loop(n, clock) (which returns its elapsed ns), running at exactly `depth` frames in a fresh thread.
    Each loop is calibrated to ~target_s per repeat; repeats go round-robin over the loops so
    that a noisy moment hurts every method alike; the minimum is kept."""
    before = before or {}
    counts: dict[str, int] = {}
    for name, loop in loops.items():
        n = 1
        while True:
            t = run_in_fresh_thread(_loop_entry, depth, loop, n, before.get(name))
            if t >= target_s * 1e9 or n >= 1 << 26:
                break
            n = n * 10 if t < target_s * 1e8 else max(n + 1, int(n * target_s * 1.2e9 / max(t, 1)))
        counts[name] = n
    samples: dict[str, list[float]] = {name: [] for name in loops}
    was_enabled = gc.isenabled()
    if disable_gc:
        gc.collect()
        gc.disable()
    try:
        for _ in range(repeats):
            for name, loop in loops.items():
                n = counts[name]
                t = run_in_fresh_thread(_loop_entry, depth, loop, n, before.get(name))
                samples[name].append(t / n)
    finally:
        if was_enabled:
            gc.enable()
    return {name: Timing(min(s), s) for name, s in samples.items()}


def _cold_chain_step(k, chain, leaf, clock_):
    # Template: every frame of a cold stack is a fresh copy of this (see fresh_function).
    if k < len(chain):
        return chain[k](k + 1, chain, leaf, clock_)
    return leaf(clock_)


def _cold_entry(result, depth, once, samples, before):
    # This entry is frame 1 (the only frame not fresh); frames 2..depth-1 are fresh chain
    # steps and frame `depth` is a fresh copy of once(), which times the operation.
    try:
        if before:
            before()
        total = 0
        for _ in range(samples):
            chain = [fresh_function(_cold_chain_step) for _ in range(depth - 2)]
            leaf = fresh_function(once)
            total += chain[0](1, chain, leaf, clock) if chain else leaf(clock)
            del chain, leaf
        result.set(total / samples)
    except BaseException as e:
        result.set(e)


def time_cold(onces: dict[str, Callable], depth: int, *, repeats: int = 7, samples: int = 100,
              before: dict[str, Callable] | None = None,
              disable_gc: bool = True) -> dict[str, Timing]:
    """ns per single timed operation on a stack of `depth` frames whose code objects (all but
    the outermost) are new for every sample — so every per-code cache starts cold. The timer
    pair's own cost is included (measure it as a row: a `once` doing nothing)."""
    if depth < 2:
        raise ValueError("a cold stack needs at least 2 frames")
    before = before or {}
    out: dict[str, list[float]] = {name: [] for name in onces}
    was_enabled = gc.isenabled()
    if disable_gc:
        gc.collect()
        gc.disable()
    try:
        for _ in range(repeats):
            for name, once in onces.items():
                out[name].append(run_in_fresh_thread(_cold_entry, depth, once, samples,
                                                     before.get(name)))
    finally:
        if was_enabled:
            gc.enable()
    return {name: Timing(min(s), s) for name, s in out.items()}


def probe_at_depth(fn: Callable, depth: int, before: Callable | None = None):
    """fn() called at exactly `depth` frames in a fresh thread (for sanity checks)."""
    def entry(result, depth, fn, before):
        try:
            if before:
                before()
            result.set(call_at_depth(depth, fn))
        except BaseException as e:
            result.set(e)
    return run_in_fresh_thread(entry, depth, fn, before)


# --- peers ----------------------------------------------------------------------------------

class Skip(Exception):
    """Raised by a peer's probe: the reason it cannot be measured here."""


@dataclass
class Peer:
    """A competitor: probe() returns a namespace for its statements or raises Skip(reason)."""

    name: str
    probe: Callable[[], dict]
    ns: dict | None = None
    reason: str | None = None

    def available(self) -> bool:
        if self.ns is None and self.reason is None:
            try:
                self.ns = self.probe()
            except Skip as e:
                self.reason = str(e)
            except Exception as e:  # an import that explodes is a skip too, with its message
                self.reason = f"{type(e).__name__}: {e}"
        return self.ns is not None


def report_peers(peers: Iterable[Peer], out=sys.stdout) -> None:
    """Prints one line per peer: available, or skipped and why."""
    for p in peers:
        if p.available():
            print(f"  peer {p.name}: available", file=out)
        else:
            print(f"  peer {p.name}: SKIPPED — {p.reason}", file=out)


# --- tables ---------------------------------------------------------------------------------

def fmt_ns(ns: float | None) -> str:
    if ns is None or math.isnan(ns):
        return "—"
    if ns >= 100_000:
        return f"{ns / 1000:,.0f} µs"
    if ns >= 10_000:
        return f"{ns / 1000:,.1f} µs"
    if ns >= 100:
        return f"{ns:,.0f}"
    return f"{ns:.1f}"


def fmt_ratio(r: float | None) -> str:
    if r is None or math.isnan(r):
        return "—"
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]],
                   align: str | None = None) -> str:
    """A GitHub-flavoured markdown table; align is one of 'l'/'r' per column (default: first
    column left, the rest right)."""
    rows = [[str(c) for c in r] for r in rows]
    align = align or "l" + "r" * (len(header) - 1)
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) if rows else len(str(h))
              for i, h in enumerate(header)]

    def line(cells):
        return "| " + " | ".join(c.ljust(w) if a == "l" else c.rjust(w)
                                 for c, w, a in zip(cells, widths, align)) + " |"

    sep = "|" + "|".join(("-" * (w + 1) + ":") if a == "r" else (":" + "-" * (w + 1))
                         for w, a in zip(widths, align)) + "|"
    return "\n".join([line([str(h) for h in header]), sep, *(line(r) for r in rows)])


def ratio_rows(results: dict[str, float | None], baseline: str) -> list[tuple[str, str, str]]:
    """(name, ns, ratio vs baseline) per result; ratio > 1 means slower than the baseline."""
    base = results.get(baseline)
    rows = []
    for name, ns in results.items():
        ratio = ns / base if ns is not None and base else None
        rows.append((name, fmt_ns(ns), fmt_ratio(ratio)))
    return rows


def slope(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Least-squares slope of ys over xs."""
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)


# --- result files -----------------------------------------------------------------------------

# Taken when a benchmark imports its helpers: the load the run started under is what tells a
# reader how far to trust its numbers, and by the time the results are written the run itself
# has raised it.
_STARTED = time.time()
_LOAD_AT_START = os.getloadavg() if hasattr(os, "getloadavg") else None


def _memory_gib() -> float | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 2**20, 1)  # the line is in kiB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _command_line() -> str:
    # sys.orig_argv is the interpreter's own argv, as typed; PYTHONPATH picks which callsite
    # build ran, so it belongs to the command.
    argv = getattr(sys, "orig_argv", None) or [sys.executable, *sys.argv]
    prefix = f"PYTHONPATH={shlex.quote(os.environ['PYTHONPATH'])} " if os.environ.get("PYTHONPATH") else ""
    return prefix + shlex.join(argv)


def _checkout_commit() -> str | None:
    """The commit of the checkout these scripts run from, with "-dirty" when its tracked files
    differ from it: which tree a result file measured (a development build's package links to
    the same checkout's sources)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        head = subprocess.run(["git", "-C", root, "rev-parse", "--short=12", "HEAD"],
                              capture_output=True, text=True, timeout=30)
        if head.returncode:
            return None
        dirty = subprocess.run(["git", "-C", root, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return head.stdout.strip() + ("-dirty" if dirty.stdout.strip() else "")


def _callsite_version() -> str | None:
    try:
        import callsite
    except ImportError:
        return None
    return callsite.__version__


def run_metadata() -> dict:
    """What every result file carries about the run that produced it: dates (UTC, ISO 8601),
    the machine (cpu model, cores, memory, load average when the benchmark started), the
    interpreter, callsite's version and the exact command line."""
    from callsite._cli.bench import cpu_model  # the reader `python -m callsite bench` uses too

    def iso(t: float) -> str:
        return datetime.datetime.fromtimestamp(t, datetime.timezone.utc).isoformat(timespec="seconds")

    return {
        "date": iso(_STARTED),
        "finished": iso(time.time()),
        "machine": {
            "cpu": cpu_model(),
            "cores": os.cpu_count(),
            "memory_gib": _memory_gib(),
            "load_average_at_start": [round(x, 2) for x in _LOAD_AT_START] if _LOAD_AT_START else None,
        },
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "callsite": _callsite_version(),
        "commit": _checkout_commit(),
        "command": _command_line(),
    }


def result_path(path: str) -> str:
    """argparse type of --json: a file whose directory exists and is writable, checked before a
    run of minutes rather than when its results are written."""
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"expected a file name, got the directory {path!r}")
    if not os.path.isdir(folder):
        raise argparse.ArgumentTypeError(f"the folder of {path!r} does not exist ({folder})")
    if not os.access(folder, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write into the folder of {path!r} ({folder})")
    return path


def output_dir(path: str) -> str:
    """argparse type of a folder a run writes files into (--keep-callgrind, --out): created when
    missing, refused before the run when it cannot be (a file of that name, no permission)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"expected a folder, got the file {path!r}")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot create the folder {path!r}: {e.strerror}")
    if not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write into the folder {path!r}")
    return path


def write_results(path: str, bench: str, data: dict) -> None:
    """Writes one benchmark's results with the run's metadata (bench/README.md: result files)."""
    out = {"bench": bench, "meta": run_metadata(), **data}
    with open(path, "w") as f:
        json.dump(out, f, indent=1, default=str)
        f.write("\n")


def environment_line() -> str:
    """One line naming the interpreter, for every table's heading."""
    v = sys.version_info
    return f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})"
