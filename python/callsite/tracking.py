"""Tracked call windows: a per-thread ring of the most recent call sites.

Instead of walking the stack when a location is wanted, keep the last N call sites of every
thread, updated on each call by a C-level hook: sys.monitoring CALL events (3.12+) or the
C profile function (every version). Off by default. Read the window as a callsite.Traceback
with ``callsite.capture(source="window", filter=...)`` or as CallSite entries with window()::

    with callsite.tracking.enable(window=8):
        ...
        site = callsite.capture(source="window", filter=my_filter, limit=1)
"""
from __future__ import annotations

import atexit as _atexit
from typing import Any, Literal

from ._callsite import Filter
from ._callsite import tracking as _t

__all__ = ["CallSite", "available_modes", "clear", "disable", "enable", "last", "refresh", "status",
           "window"]


_MODES = ("auto", "monitoring", "profile")

CallSite = _t.CallSite
window = _t.window
last = _t.last
clear = _t.clear
refresh = _t.refresh
status = _t.status

_atexit_registered = False


class _Scope:
    """Returned by enable(): as a context manager, restores the settings in force before."""

    __slots__ = ("_previous",)

    def __init__(self, previous: dict[str, Any]) -> None:
        self._previous = previous

    def __enter__(self) -> _Scope:
        return self

    def __exit__(self, *exc: object) -> None:
        p = self._previous
        if p["enabled"]:
            _t.enable(p["mode"], p["window"], p["filter"], p["tool_id"])
        else:
            _t.disable()

    def __repr__(self) -> str:
        return f"<callsite.tracking scope, restores {self._previous['mode'] or 'off'} on exit>"


def enable(
    mode: Literal["auto", "monitoring", "profile"] = "auto",
    window: int = 8,
    *,
    filter: Filter | None = None,
    tool_id: int | None = None,
) -> _Scope:
    """Starts recording the last `window` call sites of every thread.

    mode: "monitoring" (sys.monitoring CALL events, 3.12+), "profile" (the C profile
    function) or "auto" (monitoring where available). filter: a callsite.Filter; call sites in
    code it drops are not recorded (and, with monitoring, switched off for good: call
    refresh() after changing its rules). tool_id: the sys.monitoring tool id (default: 4,
    else 3). Calling enable() again reconfigures; the result is a context manager that
    restores the previous settings on exit.

    Raises:
        ValueError: ``mode`` is unknown, as in ``tracking.enable(mode="fast")``.
        ValueError: ``window`` is below 1 or ``tool_id`` outside 0-5, as in
            ``tracking.enable(window=0)``.
        TypeError: ``window`` is not an int, as in ``tracking.enable(window="8")``.
        TypeError: ``filter`` is not a Filter or None, as in ``tracking.enable(filter=3)``.

    Example:
        ::

            import callsite.tracking as tracking

            def op():
                return tracking.window(limit=2)

            with tracking.enable(window=8):
                print([site.site.qualname for site in op()])     # ['op', '<module>']
    """
    global _atexit_registered
    if mode not in _MODES:
        raise ValueError(f"enable(): mode must be one of {', '.join(map(repr, _MODES))}, "
                         f"not {mode!r}")
    if filter is not None and not isinstance(filter, Filter):
        raise TypeError(f"enable(): filter must be a callsite.Filter or None, "
                        f"not {type(filter).__name__}")
    previous = _t.status()
    _t.enable(mode, window, filter, tool_id)
    if not _atexit_registered:
        # Hooks left installed would fire during interpreter teardown.
        _atexit.register(_disable_at_exit)
        _atexit_registered = True
    return _Scope(previous)


def disable() -> None:
    """Removes every hook (no callback runs afterwards) and empties every window.

    Example:
        ::

            import callsite.tracking as tracking

            tracking.enable()
            tracking.disable()
            print(tracking.status()["enabled"])                  # False
    """
    _t.disable()


def available_modes() -> dict[str, str | None]:
    """{mode: None when usable here, else why not}, plus the mode "auto" picks.

    Example:
        ::

            import callsite.tracking as tracking

            print(tracking.available_modes())
    """
    modes = _t.available_modes()
    modes["auto"] = _t.auto_mode()
    return modes


def _disable_at_exit() -> None:
    if _t.status()["enabled"]:
        _t.disable()
