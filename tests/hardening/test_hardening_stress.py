"""Stress: threads capturing, symbolizing, rendering MLIR text, changing filters, pushing native
frames (visible ones too where this CPython has them), while others create code and run the GC,
with tracking on; RSS and refcounts checked.

Short by default (CALLSITE_STRESS_SECONDS, default 4 s); CALLSITE_LONG_TESTS=1 runs 60 s.
"""
from __future__ import annotations

import os
import sys

from hardening_support import assert_clean, describe, long_mode, run_python

SECONDS = float(os.environ.get("CALLSITE_STRESS_SECONDS", "60" if long_mode() else "4"))

STRESS = r'''
import gc, os, sys, threading, time, random
import callsite, callsite.native as native, callsite.tracking as tracking

SECONDS = float(sys.argv[1])
def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20

shared = callsite.Filter(exclude=["never_matches_anything"])
exe = native.Executable("stress", lambda s: native.Location("stress.dsl", s % 500 + 1, colno=1, end_colno=4))
ns = {}
exec(compile("def probe(c):\n    return c(limit=None)\n", "probe.py", "exec"), ns)
probe = ns["probe"]
probe_code = probe.__code__
stop = threading.Event()
ops = [0] * 16
errors = []

def loop(i, body):
    def run():
        try:
            n = 0
            while not stop.is_set():
                body(n); n += 1
            ops[i] = n
        except BaseException as e:
            errors.append(repr(e)); stop.set()
    return run

def capturer(n):
    tb = probe(callsite.capture)
    for fr in tb: str(fr)
    tb.to_mlir(); tb.to_mlir(filter=shared)
def symbolizer(n):
    tb = callsite.capture(filter=shared)
    tb.as_stack_summary(); tb.to_list()
def filter_changer(n):
    p = f"rule_{n % 50}\\.py$"
    shared.add_exclude(p) if n % 2 else shared.remove(p)
    shared.keeps(f"/gen/file_{n}.py")
def pusher(n):
    # States that never repeat, as a JIT's program counters: the reification cache is bounded.
    with exe.frame(n):
        with exe.frame(n + 1) as f:
            f.state = n + 2
            str(callsite.capture(limit=4)[0])
def code_maker(n):
    # New code objects all the time, under a bounded set of names: CPython keeps every
    # interned name for good (immortal on 3.12+), which would read as growth here.
    g = {}
    exec(compile(f"def h{n % 1000}(c):\n    return c(limit=3)\n", f"made_{n % 1000}.py", "exec"), g)
    str(g[f"h{n % 1000}"](callsite.capture)[0])
VISIBLE = native.visible_frames_available()
if VISIBLE:  # frames that are real interpreter frames, over three shards of states
    vexe = native.Executable("vstress", lambda s: native.Location("vstress.dsl", s % 700 + 1),
                             visible=True, states=20_000)
def visible_pusher(n):
    if not VISIBLE:
        return pusher(n)
    def body():
        f = native.current()
        f.state = (n * 7919) % 20_000
        tb = callsite.capture(limit=4)
        if n % 3 == 0:
            raise KeyError(n)
        return sys._getframe(1).f_lineno, str(tb[0])
    try:
        native.frame(vexe, n % 20_000)(body)()
    except KeyError:
        pass
def collector(n):
    gc.collect(); time.sleep(0.01)
def windower(n):
    def callee(): return 1
    callee()
    w = tracking.window(limit=4)
    [str(e.site) for e in w]

bodies = [capturer, symbolizer, filter_changer, pusher, visible_pusher, code_maker, collector,
          windower]
tracking.enable(mode="auto", window=16)
# Warm-up: caches and allocator pools reach their working size before RSS is sampled.
for b in bodies:
    if b is not collector:
        for n in range(300): b(n)
gc.collect()
rc_before = sys.getrefcount(probe_code)
rss_start = rss_mb()
threads = [threading.Thread(target=loop(i, b)) for i, b in enumerate(bodies)]
t0 = time.monotonic()
for t in threads: t.start()
time.sleep(SECONDS)
stop.set()
for t in threads: t.join()
elapsed = time.monotonic() - t0
tracking.disable()
gc.collect()
rss_end = rss_mb()
rc_after = sys.getrefcount(probe_code)
print(f"threads={len(threads)} ops={sum(ops)} seconds={elapsed:.1f} rss_start_mb={rss_start:.1f} "
      f"rss_end_mb={rss_end:.1f} refcount_drift={rc_after - rc_before} errors={errors[:3]}")
'''


def test_stress_threads_gc_tracking_native_frames():
    proc = run_python(STRESS, args=(str(SECONDS),), timeout=SECONDS * 10 + 300)
    assert_clean(proc)
    line = proc.stdout.strip().splitlines()[-1]
    fields = dict(kv.split("=", 1) for kv in line.split(" errors=")[0].split())
    print(line)
    assert line.endswith("errors=[]"), describe(proc)
    assert int(fields["refcount_drift"]) == 0, describe(proc)
    assert int(fields["ops"]) > 100, describe(proc)
    if os.environ.get("CALLSITE_SANITIZED"):
        return  # ASan keeps freed memory in quarantine: RSS says nothing about leaks there
    growth = float(fields["rss_end_mb"]) - float(fields["rss_start_mb"])
    # Flat: allocator noise only. An unbounded reification cache (one entry per pusher
    # operation, the states never repeat) grows by tens of MB even in the short run.
    assert growth < 12 + (8 if long_mode() else 0), describe(proc)
