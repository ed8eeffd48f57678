"""Stacks of an exact depth, for the timing harness: a measured capture sees the frames it is
said to see, all of them real (nothing simulated).

`run_in_fresh_thread` starts a thread whose first Python frame is the entry function (a
`_thread` thread has no bootstrap frames); `call_at_depth` recurses until the called function's
frame is the depth-th of the stack.
"""
from __future__ import annotations

import _thread
import sys
from types import FrameType
from typing import Any, Callable


def stack_depth(skip: int = 0) -> int:
    """Python frames on the calling thread's stack, counting the caller (minus `skip`)."""
    f: FrameType | None = sys._getframe(1 + skip)
    n = 0
    while f is not None:
        n += 1
        f = f.f_back
    return n


def _descend(remaining: int, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    # One real frame per level: the recursion is the stack being measured.
    if remaining > 0:
        return _descend(remaining - 1, fn, args)
    return fn(*args)


def call_at_depth(depth: int, fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) called so that fn's frame is the `depth`-th frame of the stack (outermost = 1)."""
    here = stack_depth(1)  # the caller's stack, the caller included
    # call_at_depth is frame here+1, the first _descend here+2, fn here+3+remaining.
    remaining = depth - here - 3
    if remaining < 0:
        raise ValueError(f"depth {depth} is shallower than the harness itself ({here + 3} frames)")
    return _descend(remaining, fn, args)


class ThreadResult:
    """Handed to a fresh thread's entry function as its first argument: it calls set(value)."""

    __slots__ = ("_box", "_done", "__weakref__")

    def __init__(self, box: list[Any], done: Any) -> None:
        self._box, self._done = box, done

    def set(self, value: Any) -> None:
        # Releases the waiter at once: an exception's traceback may keep this object alive in
        # a cycle (gc is off while timing), so its death cannot be the only signal.
        if not self._box:
            self._box.append(value)
            self._done.release()


def run_in_fresh_thread(entry: Callable[..., Any], *args: Any, timeout: float = 3600.0) -> Any:
    """entry(result, *args) run as the first and only frame of a new thread; the value it passed
    to result.set() (re-raised when it is an exception). An entry that dies without calling
    set() is noticed through the death of `result` (freed with the thread's arguments), so a
    failing entry cannot hang the caller."""
    import weakref

    box: list[Any] = []
    done = _thread.allocate_lock()
    done.acquire()

    def died(_ref: object) -> None:
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


def _at_depth_entry(result: ThreadResult, depth: int, fn: Callable[..., Any],
                    before: Callable[[], object] | None, args: tuple[Any, ...]) -> None:
    try:
        if before is not None:
            before()
        result.set(call_at_depth(depth, fn, *args))
    except BaseException as e:  # handed back to the caller, re-raised there
        result.set(e)


def at_depth_in_fresh_thread(depth: int, fn: Callable[..., Any], *args: Any,
                             before: Callable[[], object] | None = None) -> Any:
    """fn(*args) with exactly `depth` frames on a new thread's stack, fn's own the innermost;
    before() runs first in that thread (a per-thread setting such as a backend)."""
    return run_in_fresh_thread(_at_depth_entry, depth, fn, before, args)
