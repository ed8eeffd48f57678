# bench/python_trackers.py — pure-Python call trackers (both modes), as the reference.
"""The design this compares against (from a discussion of MLIR's location tracking) keeps a
window of recent call sites with sys.setprofile / threading.setprofile (before 3.12) or a
sys.monitoring CALL callback (3.12+).

Two versions of each mode:
- "plain": the code as that proposal writes it — profile: inspect.getframeinfo(frame) per call into
  a deque; monitoring: (co_name, co_filename, co_firstlineno) per CALL into a deque.
- "lean": the proposal's own suggested improvement ("update prev_loc1, prev_loc2 round-robin"),
  storing only (code, offset, callee) in a preallocated list: the fastest pure-Python form,
  and so the fair bar for callsite's C version.
Each records while used as a context manager. The per-event functions are written out in each
class: a shared helper would add a Python call per event to the cost measured.
"""
from __future__ import annotations

import inspect
import sys
import threading
from collections import deque


class _Tracker:
    def __init__(self, window: int = 8):
        self.prev_locations = deque(maxlen=window)  # plain: what the proposal keeps
        self.slots, self.i, self.n = [None] * window, 0, window  # lean: round-robin slots

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()


class _Profile(_Tracker):
    def start(self):
        threading.setprofile(self.tracker)
        sys.setprofile(self.tracker)

    def stop(self):
        sys.setprofile(None)
        threading.setprofile(None)


class _Monitoring(_Tracker):
    tool = 3  # callsite takes 4; they never run at the same time here anyway

    def start(self):
        mon = sys.monitoring
        mon.use_tool_id(self.tool, "python-tracker")
        mon.register_callback(self.tool, mon.events.CALL, self.callback)
        mon.set_events(self.tool, mon.events.CALL)

    def stop(self):
        mon = sys.monitoring
        mon.set_events(self.tool, 0)
        mon.register_callback(self.tool, mon.events.CALL, None)
        mon.free_tool_id(self.tool)


class PlainProfile(_Profile):
    """The proposal's location_tracker: sys.setprofile + threading.setprofile, getframeinfo per call."""

    name = "plain profile (Python)"

    def tracker(self, frame, event, arg):
        if event == "call":
            frame_info = inspect.getframeinfo(frame)
            self.prev_locations.append((frame.f_code.co_name, frame.f_code.co_filename,
                                        frame.f_lineno, frame_info.positions.col_offset
                                        if hasattr(frame_info, "positions") else None))


class LeanProfile(_Profile):
    """Round-robin slots of (caller code, caller f_lasti, callee code) on call and c_call."""

    name = "lean profile (Python)"

    def tracker(self, frame, event, arg):
        if event == "call":
            back = frame.f_back
            if back is not None:
                self.slots[self.i] = (back.f_code, back.f_lasti, frame.f_code)
                self.i = (self.i + 1) % self.n
        elif event == "c_call":
            self.slots[self.i] = (frame.f_code, frame.f_lasti, None)
            self.i = (self.i + 1) % self.n


class PlainMonitoring(_Monitoring):
    """The proposal's my_profiler_fast, storing what it prints into a deque."""

    name = "plain monitoring (Python)"

    def callback(self, code, instruction_offset, callable, arg0):
        self.prev_locations.append((code.co_name, code.co_filename, code.co_firstlineno))


class LeanMonitoring(_Monitoring):
    """Round-robin slots of (code, offset, callable)."""

    name = "lean monitoring (Python)"

    def callback(self, code, instruction_offset, callable, arg0):
        self.slots[self.i] = (code, instruction_offset, callable)
        self.i = (self.i + 1) % self.n


#: Per mode: the lean tracker, then the plain one.
TRACKERS = {"profile": (LeanProfile, PlainProfile), "monitoring": (LeanMonitoring, PlainMonitoring)}
