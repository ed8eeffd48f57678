"""tests/core/test_capture_in_callbacks.py — captures taken where frames are at their edges: inside
profile and trace callbacks (a frame that has not run its first instruction yet, a generator
being resumed for the first time, a frame returning). Every entry must equal what the frame
objects themselves report: the same code objects, and f_lasti for the offset."""
from __future__ import annotations

import sys

import pytest

import callsite


def _frame_chain(frame):
    out = []
    while frame is not None:
        out.append((frame.f_code, frame.f_lasti))
        frame = frame.f_back
    return out


def _plain(x):
    return x + 1


def _gen(n):
    for i in range(n):
        yield i


async def _coro():
    return 1


def _drive():
    _plain(1)
    list(_gen(2))
    c = _coro()
    try:
        c.send(None)
    except StopIteration:
        pass


EVENTS = ("call", "return")


def _collect(install, uninstall):
    seen = []

    def callback(frame, event, arg):
        if event in EVENTS and frame.f_code in (_plain.__code__, _gen.__code__, _coro.__code__):
            # The callback's own frame is innermost: compare from the hooked frame outwards.
            tb = callsite.capture(skip=1)
            seen.append((event, frame.f_code.co_name, tb.raw(), _frame_chain(frame)))
        return callback

    install(callback)
    try:
        _drive()
    finally:
        uninstall(None)
    return seen


@pytest.mark.parametrize("hook", ["setprofile", "settrace"])
def test_capture_in_hook_callbacks_matches_frame_objects(callsite_backend, hook):
    if sys.gettrace() is not None or sys.getprofile() is not None:
        pytest.skip("another tracer or profiler is active (coverage, debugger)")
    setter = getattr(sys, hook)
    seen = _collect(setter, setter)
    names = {(event, name) for event, name, _, _ in seen}
    for name in ("_plain", "_gen", "_coro"):
        assert ("call", name) in names, f"no {hook} call event for {name}: {sorted(names)}"
    for event, name, raw, expected in seen:
        assert raw == expected, f"{hook} {event} in {name}"
        # The hooked frame itself: before its first instruction f_lasti is -1 (3.10) or the
        # offset CPython reports; callsite must report the same, never a negative other than -1.
        assert raw[0][1] >= -1
