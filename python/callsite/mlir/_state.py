"""callsite.mlir's state: the bindings registered, the scopes open, and the one owner of
MLIR's process-wide traceback knobs as callsite serves them.

MLIR keeps them in ``PyGlobals::TracebackLoc`` (one per distribution of the bindings): the
switch, the frame limit and the two actions. callsite has the same four, at two levels:

- :data:`KNOBS`, callsite's own process-wide values (``callsite.mlir.set_loc_tracebacks_*``):
  the defaults of scopes that do not set their own, and, once set explicitly, the value of
  every accelerated bindings, including those accelerated later;
- one :class:`~callsite.mlir._accelerate.Accelerated` per accelerated bindings, the mirror of
  that distribution's ``PyGlobals`` (its own ``_globals`` setters change only it).

Every write goes through :class:`ProcessKnobs`; ``callsite.mlir``'s functions are a facade
over it. What the C++ op-builder wrappers read (``MlirBindings.process_settings``) is a
snapshot each Accelerated publishes after a change, never written elsewhere.
"""
from __future__ import annotations

from typing import Any

from .._callsite.mlir import MlirBindings
from . import _accelerate

#: One MlirBindings per set of bindings, keyed by its OpView class: `pkg.ir` and the native
#: `pkg._mlir_libs._mlir.ir` it re-exports are the same bindings (wrapping both would wrap twice).
by_opview: dict[int, MlirBindings] = {}
#: The bindings each open auto_locations scope acquired (bindings imported while a scope is
#: open join every open scope).
open_scopes: list[list[MlirBindings]] = []

#: MLIR's PyGlobals::TracebackLoc::kMaxFrames: frame limits are clamped to it.
MAX_DEPTH = 512
#: MLIR's default frame limit.
DEFAULT_FRAME_LIMIT = 10


def clamped_limit(value: Any, what: str, *, none_ok: bool = False) -> int:
    """`value` as a frame limit clamped to MAX_DEPTH; `what` names the argument in errors."""
    expected = "an int >= 0 or None" if none_ok else "an int >= 0"
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be {expected}, not {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be {expected}, not {value!r}")
    return min(value, MAX_DEPTH)


class ProcessKnobs:
    """callsite's process-wide limit and actions, and the bindings they are pushed to."""

    def __init__(self) -> None:
        self.limit = DEFAULT_FRAME_LIMIT
        self.flags = {"explicit": False, "current": False}  # use_traceback, nameloc_wrap
        # Knobs set through callsite's API hold for bindings accelerated later too; the
        # others keep the value MLIR gave that distribution.
        self.explicitly_set: set[str] = set()
        self.accelerated: dict[int, _accelerate.Accelerated] = {}
        # accelerate() with no ir=: bindings imported later are accelerated too.
        self.accelerate_new = False

    # --- reads --------------------------------------------------------------------------
    def flag(self, kind: str, value: Any, argument: str) -> bool:
        """A scope's action: `value` parsed, or the process-wide one when it is None."""
        if value is None:
            return self.flags[kind]
        return _accelerate.action_flag(value, kind, argument)

    def action_name(self, kind: str) -> str:
        return _accelerate.action_name(kind, self.flags[kind])

    def enabled(self) -> bool:
        return any(a.enabled for a in self.accelerated.values())

    # --- writes -------------------------------------------------------------------------
    def set_limit(self, value: Any, what: str) -> None:
        self.limit = clamped_limit(value, what)
        self.explicitly_set.add("limit")
        for a in self.accelerated.values():
            a.set_frame_limit(self.limit)

    def set_action(self, kind: str, value: Any) -> None:
        self.flags[kind] = _accelerate.action_flag(value, kind, "action")
        self.explicitly_set.add(kind)
        for a in self.accelerated.values():
            a.set_action(kind, self.flags[kind])

    def set_enabled(self, value: Any) -> None:
        if not isinstance(value, bool):
            raise TypeError(f"enabled must be a bool, not {type(value).__name__}")
        if not self.accelerated:
            raise RuntimeError("callsite.mlir.set_loc_tracebacks_enabled: no accelerated "
                               "bindings; call callsite.mlir.accelerate() first (or set "
                               "CALLSITE_MLIR=1)")
        for a in self.accelerated.values():
            a.set_enabled(value)

    # --- the accelerated bindings -------------------------------------------------------
    def accelerate(self, bindings: Any) -> _accelerate.Accelerated:
        """Serves `bindings`' knobs with callsite (idempotent); callsite's explicitly set
        knobs apply to it from now on."""
        found = self.accelerated.get(id(bindings))
        if found is not None:
            return found
        found = _accelerate.Accelerated.install_on(bindings)
        self.accelerated[id(bindings)] = found
        if "limit" in self.explicitly_set:
            found.set_frame_limit(self.limit)
        for kind in ("explicit", "current"):
            if kind in self.explicitly_set:
                found.set_action(kind, self.flags[kind])
        return found

    def accelerate_all(self, loaded: list[MlirBindings]) -> None:
        """accelerate() with no ir=: every bindings in `loaded` that has MLIR's switch (older
        MLIR has none to serve), and every set imported from now on (new_bindings)."""
        self.accelerate_new = True
        for bindings in loaded:
            if _accelerate.has_traceback_knobs(bindings.ir):
                self.accelerate(bindings)

    def new_bindings(self, bindings: MlirBindings) -> None:
        """A set of bindings was imported: accelerated if accelerate_all() is in force."""
        if self.accelerate_new and _accelerate.has_traceback_knobs(bindings.ir):
            self.accelerate(bindings)

    def decelerate_all(self) -> None:
        """decelerate() with no ir=: every accelerated bindings, and none imported later."""
        self.accelerate_new = False
        for a in list(self.accelerated.values()):
            self.decelerate(a.bindings)

    def decelerate(self, bindings: Any) -> bool:
        found = self.accelerated.pop(id(bindings), None)
        if found is None:
            return False
        found.uninstall()
        return True


KNOBS = ProcessKnobs()
