"""Hostile states kept in the suite, each in its own process: GC finalizers, signal handlers,
settrace callbacks, fork with threads, atexit with daemon threads, greenlets, and co-tenant
profilers (yappi, pyinstrument, viztracer, coverage; skipped with the reason when absent)."""
from __future__ import annotations

import importlib.util
import sys

import pytest

from hardening_support import assert_clean, describe, run_python

# What every case exercises: capture, symbolize, render, filter, a native frame.
WORK = """
import callsite, callsite.native as native
_exe = native.Executable("hostile", lambda s: native.Location("h.dsl", s + 1))
_flt = callsite.Filter(exclude=["nothing_here"])
def work(tag=0):
    with _exe.frame(tag % 100):
        tb = callsite.capture(limit=None)
        for fr in tb: str(fr)
        tb.to_mlir(filter=_flt)
        assert tb[0].filename == "h.dsl", tb[0]
        assert _flt.first_user_frame() is not None
    return len(tb)
"""


def run_case(body, expect=None, timeout=120):
    proc = run_python(WORK + body, timeout=timeout)
    assert_clean(proc, expect)
    return proc


def test_gc_finalizers():
    run_case("""
import gc
class Dies:
    def __init__(self, n): self.n = n; self.cycle = self
    def __del__(self): work(self.n)
for i in range(3000):
    Dies(i)
    if i % 100 == 0: gc.collect()
gc.collect()
print("ok")
""", "ok\n")


def test_signal_handlers():
    run_case("""
import signal, time
count = [0]
def handler(signum, frame):
    count[0] += 1; work(count[0])
signal.signal(signal.SIGALRM, handler)
signal.setitimer(signal.ITIMER_REAL, 0.0005, 0.0005)
end = time.monotonic() + 1.0
while time.monotonic() < end:
    work(1)
signal.setitimer(signal.ITIMER_REAL, 0, 0)
print(count[0] > 20)
""", "True\n")


def test_settrace_callbacks():
    run_case("""
import sys, threading
seen = [0]
def tracer(frame, event, arg):
    if frame.f_code.co_name == "target" and event in ("call", "line"):
        seen[0] += 1; work(seen[0])
    return tracer
def target():
    x = 1
    y = x + 1
    return y
sys.settrace(tracer); threading.settrace(tracer)
for _ in range(200): target()
t = threading.Thread(target=lambda: [target() for _ in range(50)]); t.start(); t.join()
sys.settrace(None)
print(seen[0] > 500)
""", "True\n")


def test_fork_with_threads_capturing_and_tracking_on():
    run_case("""
import os, threading, time, warnings, callsite.tracking as tracking
warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads (3.12+)
tracking.enable(window=8)
stop = threading.Event()
def spin():
    while not stop.is_set(): work(2)
ts = [threading.Thread(target=spin) for _ in range(3)]
for t in ts: t.start()
codes = []
for _ in range(8):
    time.sleep(0.02)
    pid = os.fork()
    if pid == 0:
        try:
            work(3); tracking.window(); tracking.disable(); work(4)
            os._exit(0)
        except BaseException:
            os._exit(1)
    codes.append(os.waitpid(pid, 0)[1])
stop.set()
for t in ts: t.join()
tracking.disable()
print(codes == [0] * 8)
""", "True\n")


def test_atexit_and_daemon_threads_inside_callsite():
    run_case("""
import atexit, threading, time
def daemon():
    while True: work(5)
for _ in range(3): threading.Thread(target=daemon, daemon=True).start()
atexit.register(lambda: print("atexit", work(6) > 0))
time.sleep(0.1)
""", "atexit True\n")


def test_greenlets_python_frames():
    if importlib.util.find_spec("greenlet") is None:
        pytest.skip("greenlet is not installed; scripts/setup.sh installs it")
    run_case("""
import greenlet
import traceback
def inner(n):
    names = [f.name for f in callsite.capture(limit=None) if f.kind == "python"]
    want = [f.name for f in traceback.extract_stack()][::-1]   # CPython, in this greenlet
    assert names == want == ["inner", "other"], (names, want)
    main.switch(n)
def other():
    for i in range(100):
        inner(i); work(i)
main = greenlet.getcurrent()
g = greenlet.greenlet(other)
total = 0
while not g.dead:
    r = g.switch()
    total += 1
    work(1)
print(total)
""", "101\n")


def _module_or_skip(name):
    if importlib.util.find_spec(name) is None:
        pytest.skip(f"{name} is not installed (scripts/setup.sh installs it when it can)")


def test_yappi_co_tenant():
    _module_or_skip("yappi")
    run_case("""
import yappi, threading, callsite.tracking as tracking
yappi.start()
with tracking.enable(mode="auto"):
    ts = [threading.Thread(target=lambda: [work(i) for i in range(300)]) for _ in range(3)]
    for t in ts: t.start()
    for t in ts: t.join()
    for i in range(300): work(i)
yappi.stop()
print(len(yappi.get_func_stats()) > 0)
""", "True\n")


def test_pyinstrument_co_tenant():
    _module_or_skip("pyinstrument")
    run_case("""
import pyinstrument, callsite.tracking as tracking
p = pyinstrument.Profiler(interval=0.0001)
p.start()
with tracking.enable(mode="auto"):
    for i in range(2000): work(i)
p.stop()
print("work" in p.output_text())
""", "True\n")


def test_viztracer_co_tenant():
    _module_or_skip("viztracer")
    run_case("""
import viztracer, callsite.tracking as tracking
v = viztracer.VizTracer(verbose=0, tracer_entries=100000)
v.start()
with tracking.enable(mode="auto"):
    for i in range(500): work(i)
v.stop()
print("ok")
""", "ok\n")


@pytest.mark.parametrize("core", ["ctrace", "pytrace", "sysmon"])
def test_coverage_co_tenant(core):
    _module_or_skip("coverage")
    if core == "sysmon" and sys.version_info < (3, 12):
        pytest.skip("coverage's sysmon core needs 3.12+")
    proc = run_python(WORK + """
import coverage, callsite.tracking as tracking
cov = coverage.Coverage(data_file=None)
cov.start()
with tracking.enable(mode="auto"):
    for i in range(500): work(i)
cov.stop()
print("ok", cov.get_data().measured_files() is not None)
""", env={"COVERAGE_CORE": core})
    assert_clean(proc, "ok True\n")
