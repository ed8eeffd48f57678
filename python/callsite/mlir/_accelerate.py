"""MLIR's own traceback switches, served by callsite.

After :meth:`Accelerated.install_on`, the process-wide knobs of one set of bindings
(``<pkg>._mlir_libs._mlir.globals``: ``set_loc_tracebacks_enabled``,
``set_loc_tracebacks_frame_limit``, ``register_traceback_file_inclusion/exclusion``,
``set_traceback_action_on_explicit_loc/_on_current_loc`` and their getters) and
``ir.loc_tracebacks()`` keep their meaning, but the location is built by callsite's op-builder
wrappers: MLIR's own walk stays switched off (its enabled flag is never set), so it never runs
twice and works where MLIR's records nothing (stable-ABI wheels on 3.12+).

The state mirrors MLIR's ``PyGlobals::TracebackLoc``: one switch, one frame limit (clamped by
the bindings themselves, read back after forwarding), two actions, and the file rules (forwarded
to MLIR too, so they stay in force if the wrappers are ever removed). Rules registered before
acceleration are invisible (MLIR has no getter); the generated ``_*_ops_gen.py`` files' own
registrations are matched by the filter's default ``_ops_gen.py`` rule. Which bindings are
accelerated, and callsite's own process-wide values, are kept by ``callsite.mlir._state.KNOBS``.
"""
from __future__ import annotations

import contextlib
import sys
from types import ModuleType
from collections.abc import Callable, Iterator
from typing import Any

from .._callsite import Filter
from .._callsite.mlir import MlirBindings, MlirSettings

_GLOBALS_METHODS = (
    "loc_tracebacks_enabled",
    "set_loc_tracebacks_enabled",
    "loc_tracebacks_frame_limit",
    "set_loc_tracebacks_frame_limit",
    "register_traceback_file_inclusion",
    "register_traceback_file_exclusion",
)
_ACTIONS = {
    # MLIR name -> (enum class name in _mlir, choices: index 0 default, 1 the other)
    "explicit": ("OnExplicitAction", ("use_explicit", "use_traceback")),
    "current": ("CurrentLocAction", ("fallback", "nameloc_wrap")),
}


def action_flag(value: Any, kind: str, argument: str) -> bool:
    """False/True for an action given as MLIR's enum member, its int value or its name."""
    choices = _ACTIONS[kind][1]
    if isinstance(value, bool):
        raise TypeError(f"{argument} must be one of {choices!r}, 0/1 or MLIR's enum, not {value!r}")
    if isinstance(value, int) or isinstance(getattr(value, "value", None), int):
        number = value if isinstance(value, int) else value.value
        if number in (0, 1):
            return number == 1
    name = getattr(value, "name", value)
    if isinstance(name, str) and name.lower() in choices:
        return name.lower() == choices[1]
    raise ValueError(f"{argument} must be one of {choices!r}, 0/1 or MLIR's enum, not {value!r}")


def either(short: Any, long: Any) -> Any:
    """One action given under MLIR's two spellings (``on_explicit``/``on_explicit_actn``,
    ``current_loc``/``current_loc_actn``): the short one wins; None when neither is given."""
    return short if short is not None else long


def action_name(kind: str, flag: bool) -> str:
    """MLIR's lower-case name of an action: "use_explicit"/"use_traceback", "fallback"/"nameloc_wrap"."""
    return _ACTIONS[kind][1][flag]


def _native_package(ir: ModuleType) -> ModuleType | None:
    """`<pkg>._mlir_libs._mlir`: the extension whose `globals` holds the traceback knobs."""
    native_ir = str(getattr(vars(ir)["Location"], "__module__", ""))  # <pkg>._mlir_libs._mlir.ir
    return sys.modules.get(native_ir.rpartition(".")[0])


class Accelerated:
    """One set of bindings whose traceback knobs callsite serves."""

    def __init__(self, bindings: MlirBindings, native: ModuleType):
        self.bindings = bindings
        self.native = native
        self.globals = native.globals
        self.globals_type = type(self.globals)
        self.original = {name: getattr(self.globals_type, name) for name in _GLOBALS_METHODS
                         if hasattr(self.globals_type, name)}
        self.enabled = False
        # The two actions by kind ("explicit": use_traceback, "current": nameloc_wrap), as
        # callsite's process-wide knobs keep them (_state.ProcessKnobs.flags).
        self.flags = {"explicit": False, "current": False}
        self.filter = Filter()  # MLIR's rules start empty; generated files match the default
        self.installed_loc_tracebacks: Any = None
        self.saved_loc_tracebacks: Any = None

    # --- state -> the process-wide settings the C++ wrappers read -------------------------
    def limit(self) -> int:
        return int(self.original["loc_tracebacks_frame_limit"](self.globals))

    def refresh(self) -> None:
        self.bindings.process_settings = (
            MlirSettings(self.filter, self.limit(), use_traceback=self.flags["explicit"],
                         nameloc_wrap=self.flags["current"])
            if self.enabled else None)

    def enum(self, kind: str, flag: bool) -> Any:
        enum_name, choices = _ACTIONS[kind]
        enum_type = getattr(self.native, enum_name, None)
        return getattr(enum_type, choices[flag].upper()) if enum_type is not None else int(flag)

    # --- MLIR's knobs -------------------------------------------------------------------
    def set_enabled(self, value: bool) -> None:
        self.enabled = bool(value)
        self.refresh()

    def set_frame_limit(self, value: int) -> None:
        self.original["set_loc_tracebacks_frame_limit"](self.globals, value)  # MLIR clamps
        self.refresh()

    def include(self, filename: str) -> None:
        self.original["register_traceback_file_inclusion"](self.globals, filename)
        self.filter.include_file(filename)

    def exclude(self, filename: str) -> None:
        self.original["register_traceback_file_exclusion"](self.globals, filename)
        self.filter.exclude_file(filename)

    def set_action(self, kind: str, flag: bool) -> None:
        self.flags[kind] = flag
        self.refresh()

    @classmethod
    def install_on(cls, bindings: MlirBindings) -> Accelerated:
        """Serves `bindings`' traceback knobs with callsite (TypeError: they have none)."""
        native = _native_package(bindings.ir) if has_traceback_knobs(bindings.ir) else None
        if native is None:
            raise TypeError(f"callsite.mlir.accelerate: {bindings.ir.__name__} has no traceback "
                            "knobs (`_mlir_libs._mlir.globals.set_loc_tracebacks_enabled`: MLIR "
                            "older than loc_tracebacks); use callsite.mlir.auto_locations there")
        accelerated = cls(bindings, native)
        accelerated.install()
        return accelerated

    def install(self) -> None:
        self.bindings.acquire()  # the op-builder wrappers stay until uninstall()
        me = self
        patches = {
            "loc_tracebacks_enabled": lambda self: me.enabled,
            "set_loc_tracebacks_enabled": lambda self, value: me.set_enabled(value),
            "set_loc_tracebacks_frame_limit": lambda self, value: me.set_frame_limit(value),
            "register_traceback_file_inclusion": lambda self, filename: me.include(filename),
            "register_traceback_file_exclusion": lambda self, filename: me.exclude(filename),
            "traceback_action_on_explicit_loc": lambda self: me.enum("explicit", me.flags["explicit"]),
            "set_traceback_action_on_explicit_loc":
                lambda self, action: me.set_action("explicit", action_flag(action, "explicit", "action")),
            "traceback_action_on_current_loc": lambda self: me.enum("current", me.flags["current"]),
            "set_traceback_action_on_current_loc":
                lambda self, action: me.set_action("current", action_flag(action, "current", "action")),
        }
        self.replaced = {name: vars(self.globals_type).get(name) for name in patches}
        for name, function in patches.items():
            function.__name__ = name
            function.__qualname__ = f"{self.globals_type.__name__}.{name}"
            function.__doc__ = f"MLIR's {name}, served by callsite.mlir.accelerate()."
            setattr(self.globals_type, name, function)
        if self.original["loc_tracebacks_enabled"](self.globals):  # switched on before us
            self.original["set_loc_tracebacks_enabled"](self.globals, False)
            self.set_enabled(True)
        ir = self.bindings.ir
        self.saved_loc_tracebacks = vars(ir).get("loc_tracebacks")
        self.installed_loc_tracebacks = self.make_loc_tracebacks()
        setattr(ir, "loc_tracebacks", self.installed_loc_tracebacks)

    def uninstall(self) -> None:
        """Back to MLIR's own: its methods, its loc_tracebacks, its walk (switched on if the
        switch is on now); the rules registered meanwhile were forwarded to it already."""
        for name, original in self.replaced.items():
            if original is not None:
                setattr(self.globals_type, name, original)
        ir = self.bindings.ir
        if vars(ir).get("loc_tracebacks") is self.installed_loc_tracebacks:
            setattr(ir, "loc_tracebacks", self.saved_loc_tracebacks)
        self.bindings.process_settings = None
        self.bindings.release()
        if self.enabled:
            self.original["set_loc_tracebacks_enabled"](self.globals, True)
        if self.flags["explicit"] or self.flags["current"]:
            for kind, setter in (("explicit", "set_traceback_action_on_explicit_loc"),
                                 ("current", "set_traceback_action_on_current_loc")):
                getattr(self.globals, setter)(self.enum(kind, self.flags[kind]))

    def make_loc_tracebacks(self) -> Callable[..., contextlib.AbstractContextManager[None]]:
        me = self

        @contextlib.contextmanager
        def loc_tracebacks(*, max_depth: int | None = None, on_explicit: Any = None,
                           current_loc: Any = None, on_explicit_actn: Any = None,
                           current_loc_actn: Any = None) -> Iterator[None]:
            """MLIR's ir.loc_tracebacks() (served by callsite.mlir.accelerate()): enables
            traceback locations process-wide for the block, restoring the previous switch,
            limit and actions after it. Accepts both spellings of the actions."""
            explicit = either(on_explicit, on_explicit_actn)
            current = either(current_loc, current_loc_actn)
            new_flags = {
                "explicit": explicit is not None
                and action_flag(explicit, "explicit", "on_explicit"),
                "current": current is not None and action_flag(current, "current", "current_loc"),
            }
            old_enabled, old_limit, old_flags = me.enabled, me.limit(), dict(me.flags)
            try:
                me.original["set_loc_tracebacks_frame_limit"](
                    me.globals, old_limit if max_depth is None else max_depth)
                me.flags, me.enabled = new_flags, True
                me.refresh()
                yield
            finally:
                me.enabled, me.flags = old_enabled, old_flags
                me.original["set_loc_tracebacks_frame_limit"](me.globals, old_limit)
                me.refresh()

        loc_tracebacks.__module__ = self.bindings.ir.__name__
        return loc_tracebacks


def has_traceback_knobs(ir: ModuleType) -> bool:
    """True if the bindings have MLIR's traceback switch (all of _GLOBALS_METHODS)."""
    native = _native_package(ir)
    knobs = getattr(native, "globals", None) if native is not None else None
    return knobs is not None and all(hasattr(type(knobs), name) for name in _GLOBALS_METHODS)
