"""callsite.mlir — the user's source location on every op built through MLIR's Python bindings::

    import callsite.mlir
    with ir.Context(), ir.Location.unknown(), callsite.mlir.auto_locations():
        ...  # every op built without loc= gets the caller's stack as MLIR's loc_tracebacks() would

Works with any distribution of the bindings (``mlir.ir``, ``iree.compiler.ir``,
``jaxlib.mlir.ir``, ``circt.ir``, ``cutlass._mlir.ir``... recognised by structure, or a module
passed to :func:`use`). :func:`accelerate` makes MLIR's own switches (``ir.loc_tracebacks()``
and the ``_globals`` knobs) produce callsite's locations; ``CALLSITE_MLIR=1`` does it for any
process. Locations are built by C++ wrappers of the
bindings' op builders and cached per context, per call site and per frame. A DSL that traces
first and emits later keeps ``callsite.capture()`` per node and calls
``location(traceback, filter=...)`` at emit time. The state (the bindings, the open scopes,
the process-wide knobs) is kept by ``callsite.mlir._state``; the functions here are a facade
over it. Detection is ``_detect``, MLIR's switches served by callsite ``_accelerate``.
"""
from __future__ import annotations

import contextlib
import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from .._callsite import Filter
from .._callsite import mlir as _m
from .._callsite import tracking as _tracking
from .._callsite.mlir import MlirBindings, MlirSettings
# The op-builder wrappers' types, importable where their names say (callsite.mlir._MethodInjector).
from .._callsite.mlir import _FunctionInjector, _MethodInjector  # noqa: F401
from . import _accelerate, _detect
from . import _state
from ._status import status

__all__ = [
    "KNOWN_IR_MODULES",
    "MAX_DEPTH",
    "accelerate",
    "auto_locations",
    "bindings",
    "cache_info",
    "clear_caches",
    "decelerate",
    "loc_tracebacks",
    "loc_tracebacks_enabled",
    "loc_tracebacks_frame_limit",
    "location",
    "register_traceback_file_exclusion",
    "register_traceback_file_inclusion",
    "set_loc_tracebacks_enabled",
    "set_loc_tracebacks_frame_limit",
    "set_traceback_action_on_current_loc",
    "status",
    "set_traceback_action_on_explicit_loc",
    "traceback_action_on_current_loc",
    "traceback_action_on_explicit_loc",
    "use",
]

#: The largest frame limit MLIR accepts; larger limits are clamped to it.
MAX_DEPTH = _state.MAX_DEPTH
DEFAULT_FRAME_LIMIT = _state.DEFAULT_FRAME_LIMIT
_KNOBS = _state.KNOBS

from .._callsite.mlir import location  # noqa: E402

_by_opview = _state.by_opview
_open_scopes = _state.open_scopes


def _opview_key(ir: ModuleType) -> int:
    opview = getattr(ir, "OpView", None)
    return id(opview) if opview is not None else id(ir)


def use(ir: ModuleType | str) -> MlirBindings:
    """The bindings of an ``ir`` module (or its dotted name), registered for callsite.

    Raises:
        TypeError: ``ir`` is not a module or a dotted name, as in ``mlir.use(3)``.
        ModuleNotFoundError: ``ir`` names a module that does not import, as in
            ``mlir.use("no_such_dsl.ir")``.

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir

            bindings = callsite.mlir.use(ir)         # or its dotted name, imported if needed
            print(bindings is callsite.mlir.use("iree.compiler.ir"))   # True
    """
    if isinstance(ir, str):
        ir = importlib.import_module(ir)
    if not isinstance(ir, ModuleType):
        raise TypeError(f"ir must be an MLIR bindings `ir` module or its dotted name, not "
                        f"{type(ir).__name__}")
    key = _opview_key(ir)
    found = _by_opview.get(key)
    if found is None:
        found = _by_opview[key] = MlirBindings(ir)
    return found


def bindings(ir: ModuleType | str | None = None) -> list[MlirBindings]:
    """The bindings auto_locations applies to: `ir`'s if given; else every set of MLIR bindings
    already imported (recognised by structure, never imported to find out) and every module
    passed to use().

    Raises:
        ImportError: no MLIR bindings are imported (the message says what to do).
        ModuleNotFoundError: ``ir`` names a module that does not import, as in
            ``mlir.bindings("no_such_dsl.ir")``.

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir

            for b in callsite.mlir.bindings():
                print(b.ir.__name__)                 # iree.compiler.ir
    """
    if ir is not None:
        return [use(ir)]
    for module in _detect.loaded_ir_modules():
        use(module)
    if not _by_opview:
        raise ImportError(_detect.none_loaded_message())
    return list(_by_opview.values())


def _on_bindings_imported(module: ModuleType) -> None:
    """A set of bindings was imported: it joins the open scopes (and accelerate())."""
    b = use(module)
    _KNOBS.new_bindings(b)
    for acquired in _open_scopes:
        if b not in acquired:
            b.acquire()
            acquired.append(b)


def auto_locations(
    filter: Filter | None = None,
    *,
    limit: int | None = None,
    on_explicit: Any = None,
    current_loc: Any = None,
    ir: ModuleType | str | None = None,
    source: str = "walk",
    boundary: object = None,
) -> contextlib.AbstractContextManager[MlirSettings]:
    """Ops built in this scope without ``loc=`` get the caller's stack as their location.

    filter: which frames count (default Filter.default(): no generated ``*_ops_gen.py``, no callsite);
    limit: at most this many kept frames (default: the filter's). on_explicit: "use_explicit"
    keeps an explicit loc=, "use_traceback" replaces it. current_loc: "fallback" ignores an
    enclosing ``with Location``, "nameloc_wrap" wraps the result in its NameLoc names (None:
    the process-wide action, see set_traceback_action_on_explicit_loc/_on_current_loc). MLIR's
    enum members and their 0/1 values are accepted too. The settings are the calling thread's
    (and asyncio task's) only and win over the process-wide ones; scopes nest. ir: the
    bindings (default: every set already imported, and any imported while the scope is open).
    source: "walk" (default) walks the stack at each op; "window" takes the most recent call
    sites the filter keeps from callsite.tracking's window instead (tracking must be enabled
    and cover this thread when the scope is entered: RuntimeError there otherwise; an explicit
    limit replaces the filter's, as on the walk). The window wins when tracking is on anyway
    and stacks are deep (no walk, no whole-stack key); it is a record of recent calls, not the
    stack: with limit=1 it is the user's line that made the innermost kept call, which is where
    the op was built; deeper entries are earlier calls, not callers. boundary: a kernel (function, method or code
    object) at whose innermost frame every location stops, as inside
    ``with callsite.boundary(kernel)``: the kernel's line is kept whatever the filter says and
    nothing below it is walked.

    The scope starts when the result is entered (``with``); each result is one scope, entered
    once (RuntimeError otherwise: call auto_locations() again for another).

    Raises:
        TypeError: ``filter`` is not a :class:`callsite.Filter` or None, as in
            ``mlir.auto_locations(3).__enter__()``.
        ValueError: ``limit`` is negative or ``source`` is unknown, as in
            ``mlir.auto_locations(source="stack").__enter__()``.
        ImportError: no MLIR bindings are imported and ``ir`` is not given.
        RuntimeError: ``source='window'`` while call tracking is off, as in
            ``mlir.auto_locations(source="window").__enter__()``.

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir
            from iree.compiler.dialects import arith

            with ir.Context(), ir.Location.unknown():
                module = ir.Module.create()
                with ir.InsertionPoint(module.body), callsite.mlir.auto_locations():
                    arith.constant(ir.IndexType.get(), 1)      # gets this line as its location
                print(module.operation.get_asm(enable_debug_info=True))
    """
    return _Scope(_scope, dict(filter=filter, limit=limit, on_explicit=on_explicit,
                               current_loc=current_loc, ir=ir, source=source, boundary=boundary))


class _Scope(contextlib.AbstractContextManager[MlirSettings]):
    """One auto_locations() scope: the generator's context manager, entered at most once."""

    __slots__ = ("_make", "_arguments", "_entered")

    def __init__(self, make: Any, arguments: dict[str, Any]) -> None:
        self._make = make
        self._arguments = arguments
        self._entered: contextlib.AbstractContextManager[MlirSettings] | None = None

    def __enter__(self) -> MlirSettings:
        if self._entered is not None:
            raise RuntimeError("callsite.mlir.auto_locations(): this scope object was already "
                               "entered; each auto_locations() call makes one scope, so call "
                               "it again for another (nested or later) scope")
        self._entered = self._make(**self._arguments)
        return self._entered.__enter__()

    def __exit__(self, *exc: Any) -> bool | None:
        if self._entered is None:
            raise RuntimeError("callsite.mlir.auto_locations(): __exit__ without __enter__")
        return self._entered.__exit__(*exc)


def _window_refusal() -> str | None:
    """Why source="window" cannot serve the calling thread now, or None."""
    status = _tracking.status()
    if not status["enabled"]:
        return ("callsite.mlir.auto_locations(source='window') needs call tracking, which is "
                "off: call callsite.tracking.enable() first (or use source='walk')")
    if not status["this_thread"]:
        return ("callsite.mlir.auto_locations(source='window'): call tracking does not cover "
                "this thread (profile mode covers the threads that existed at enable() and "
                "those started through threading since); use source='walk' here")
    return None


@contextlib.contextmanager
def _scope(
    filter: Filter | None,
    limit: int | None,
    on_explicit: Any,
    current_loc: Any,
    ir: ModuleType | str | None,
    source: str,
    boundary: object,
) -> Iterator[MlirSettings]:
    if source not in ("walk", "window"):
        raise ValueError(f"source must be 'walk' or 'window', not {source!r}")
    kernel_boundary = None
    if boundary is not None:
        kernel_boundary = _m._boundary(boundary, "boundary")
    settings = MlirSettings(
        filter,
        limit,
        use_traceback=_KNOBS.flag("explicit", on_explicit, "on_explicit"),
        nameloc_wrap=_KNOBS.flag("current", current_loc, "current_loc"),
        window=source == "window",
    )
    if source == "window":  # refused here, not at the first op built
        why = _window_refusal()
        if why is not None:
            raise RuntimeError(why)
    acquired: list[MlirBindings] = []
    if ir is None:
        _detect.watch_imports(_on_bindings_imported)
    targets = bindings(ir)
    token = _m.settings.set(settings)
    if ir is None:
        _open_scopes.append(acquired)
    try:
        for b in targets:
            b.acquire()
            acquired.append(b)
        if kernel_boundary is None:
            yield settings
        else:
            with kernel_boundary:
                yield settings
    finally:
        _m.settings.reset(token)
        if ir is None:
            _open_scopes.remove(acquired)
        for b in acquired:
            b.release()


def _enclosing_limit() -> int | None:
    current = _m.settings.get(None)
    if isinstance(current, MlirSettings):
        return current.limit if current.limit is not None else current.filter.limit
    return _KNOBS.limit


def loc_tracebacks(
    *,
    max_depth: int | None = None,
    on_explicit: Any = None,
    current_loc: Any = None,
    on_explicit_actn: Any = None,
    current_loc_actn: Any = None,
    ir: ModuleType | str | None = None,
) -> contextlib.AbstractContextManager[MlirSettings]:
    """Drop-in for MLIR's ``ir.loc_tracebacks()``: same arguments (both MLIR's
    ``on_explicit_actn``/``current_loc_actn`` names and the short ones), same meaning, the
    rules of Filter.default() (see register_traceback_file_inclusion/exclusion). max_depth=None
    keeps the enclosing scope's limit (outside one: set_loc_tracebacks_frame_limit's); it is
    clamped to 512 as in MLIR. Unlike MLIR's switch, the scope is the calling thread's/task's
    only (accelerate() gives MLIR's own switch callsite's locations process-wide).

    Raises:
        ValueError: ``max_depth`` is negative, as in
            ``mlir.loc_tracebacks(max_depth=-1).__enter__()``.
        TypeError: ``max_depth`` is not an int or None, as in
            ``mlir.loc_tracebacks(max_depth="10").__enter__()``.

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir
            from iree.compiler.dialects import arith

            with ir.Context(), ir.Location.unknown():
                module = ir.Module.create()
                with ir.InsertionPoint(module.body), callsite.mlir.loc_tracebacks(max_depth=4):
                    arith.constant(ir.IndexType.get(), 1)
                print(module.operation.get_asm(enable_debug_info=True))
    """
    explicit = _accelerate.either(on_explicit, on_explicit_actn)
    current = _accelerate.either(current_loc, current_loc_actn)
    depth = (_enclosing_limit() if max_depth is None
             else _state.clamped_limit(max_depth, "loc_tracebacks(): max_depth", none_ok=True))
    return auto_locations(
        Filter.default(),
        limit=depth,
        # As MLIR's: the actions are the scope's own, their defaults when not given.
        on_explicit="use_explicit" if explicit is None else explicit,
        current_loc="fallback" if current is None else current,
        ir=ir,
    )


def register_traceback_file_inclusion(filename: str) -> None:
    """As MLIR's ``_globals.register_traceback_file_inclusion``, on Filter.default().

    Raises:
        TypeError: ``filename`` is not a str or os.PathLike, as in
            ``mlir.register_traceback_file_inclusion(3)``.

    Example:
        ::

            import callsite, callsite.mlir

            callsite.mlir.register_traceback_file_inclusion("/opt/my_dsl/examples.py")
            print(callsite.Filter.default().keeps("/opt/my_dsl/examples.py"))  # True
    """
    Filter.default().include_file(filename)


def register_traceback_file_exclusion(filename: str) -> None:
    """As MLIR's ``_globals.register_traceback_file_exclusion``, on Filter.default().

    Raises:
        TypeError: ``filename`` is not a str or os.PathLike, as in
            ``mlir.register_traceback_file_exclusion(3)``.

    Example:
        ::

            import callsite, callsite.mlir

            callsite.mlir.register_traceback_file_exclusion("/opt/my_dsl/builder.py")
            print(callsite.Filter.default().keeps("/opt/my_dsl/builder.py"))   # False
    """
    Filter.default().exclude_file(filename)


# --- MLIR's switches, served by callsite ---------------------------------------------------


def accelerate(ir: ModuleType | str | None = None) -> list[MlirBindings]:
    """MLIR's own traceback switches produce callsite-built locations, process-wide.

    After this, ``ir.loc_tracebacks()``, ``_globals.set_loc_tracebacks_enabled()``,
    ``set_loc_tracebacks_frame_limit()``, ``register_traceback_file_inclusion/exclusion()``,
    ``set_traceback_action_on_explicit_loc()`` / ``_on_current_loc()`` of the bindings keep
    MLIR's semantics and text, but callsite builds the locations (MLIR's own walk stays off;
    this also works on the stable-ABI wheels where MLIR's records nothing). ir: one set of
    bindings; default every set already imported and every set imported later. Returns the
    bindings accelerated so far. ``CALLSITE_MLIR=1`` in the environment does this at start-up.

    Raises:
        TypeError: ``ir`` is not a module or a dotted name, as in ``mlir.accelerate(3)``.
        ModuleNotFoundError: ``ir`` names a module that does not import, as in
            ``mlir.accelerate("no_such_dsl.ir")``.

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir

            callsite.mlir.accelerate(ir)             # ir.loc_tracebacks() now builds callsite's locations
            with ir.Context(), ir.Location.unknown(), ir.loc_tracebacks():
                module = ir.Module.create()
            callsite.mlir.decelerate(ir)
    """
    if ir is not None:
        b = use(ir)
        _KNOBS.accelerate(b)
        return [b]
    _detect.watch_imports(_on_bindings_imported)
    _KNOBS.accelerate_all([use(module) for module in _detect.loaded_ir_modules()
                          if _accelerate.has_traceback_knobs(module)])
    return [a.bindings for a in _KNOBS.accelerated.values()]


def _start_up_accelerate(_module: ModuleType | None) -> None:
    """The start-up hook's call (CALLSITE_MLIR on) when MLIR bindings are imported."""
    accelerate()


def decelerate(ir: ModuleType | str | None = None) -> None:
    """Undoes accelerate(): MLIR's own switches and walk again (for `ir`'s bindings, default
    all of them; bindings imported later are no longer accelerated).

    Raises:
        TypeError: ``ir`` is not a module or a dotted name, as in ``mlir.decelerate(3)``.

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir

            callsite.mlir.accelerate(ir)
            callsite.mlir.decelerate(ir)             # MLIR's own walk again
            print(callsite.mlir.loc_tracebacks_enabled())
    """
    if ir is not None:
        _KNOBS.decelerate(use(ir))
        return
    _KNOBS.decelerate_all()


# --- MLIR's process-wide knobs in callsite's API (kept by _state.KNOBS) -------------------


def set_loc_tracebacks_frame_limit(limit: int) -> None:
    """Process-wide frame limit (MLIR's knob: default 10, clamped to 512, counts kept frames)
    for loc_tracebacks(max_depth=None) outside a scope and for every accelerated bindings. A
    scope's own limit wins inside it.

    Raises:
        ValueError: ``limit`` is negative, as in
            ``mlir.set_loc_tracebacks_frame_limit(-1)``.
        TypeError: ``limit`` is not an int, as in
            ``mlir.set_loc_tracebacks_frame_limit("3")``.

    Example:
        ::

            import callsite.mlir

            callsite.mlir.set_loc_tracebacks_frame_limit(4)
            print(callsite.mlir.loc_tracebacks_frame_limit())
            callsite.mlir.set_loc_tracebacks_frame_limit(10)
    """
    _KNOBS.set_limit(limit, "set_loc_tracebacks_frame_limit(): limit")


def loc_tracebacks_frame_limit() -> int:
    """The process-wide frame limit set_loc_tracebacks_frame_limit() set (MLIR's default: 10).

    Example:
        ::

            import callsite.mlir

            print(callsite.mlir.loc_tracebacks_frame_limit())   # 10, MLIR's default
    """
    return _KNOBS.limit


def set_traceback_action_on_explicit_loc(action: Any) -> None:
    """Process-wide: "use_explicit" (default) keeps an explicit loc=, "use_traceback" replaces
    it. Applies to scopes that do not pass on_explicit= and to every accelerated bindings.

    Raises:
        ValueError: ``action`` is not one of the two names, 0/1 or MLIR's enum, as in
            ``mlir.set_traceback_action_on_explicit_loc("replace")``.

    Example:
        ::

            import callsite.mlir

            callsite.mlir.set_traceback_action_on_explicit_loc("use_traceback")
            print(callsite.mlir.traceback_action_on_explicit_loc())
            callsite.mlir.set_traceback_action_on_explicit_loc("use_explicit")
    """
    _KNOBS.set_action("explicit", action)


def traceback_action_on_explicit_loc() -> str:
    """The process-wide action on an explicit loc=: "use_explicit" or "use_traceback".

    Example:
        ::

            import callsite.mlir

            print(callsite.mlir.traceback_action_on_explicit_loc())  # 'use_explicit'
    """
    return _KNOBS.action_name("explicit")


def set_traceback_action_on_current_loc(action: Any) -> None:
    """Process-wide: "fallback" (default) or "nameloc_wrap"; as the explicit-loc action.

    Raises:
        ValueError: ``action`` is not one of the two names, 0/1 or MLIR's enum, as in
            ``mlir.set_traceback_action_on_current_loc("wrap")``.

    Example:
        ::

            import callsite.mlir

            callsite.mlir.set_traceback_action_on_current_loc("nameloc_wrap")
            print(callsite.mlir.traceback_action_on_current_loc())
            callsite.mlir.set_traceback_action_on_current_loc("fallback")
    """
    _KNOBS.set_action("current", action)


def traceback_action_on_current_loc() -> str:
    """The process-wide action on the current location: "fallback" or "nameloc_wrap".

    Example:
        ::

            import callsite.mlir

            print(callsite.mlir.traceback_action_on_current_loc())   # 'fallback'
    """
    return _KNOBS.action_name("current")


def set_loc_tracebacks_enabled(enabled: bool) -> None:
    """MLIR's process-wide switch, on every accelerated bindings (see accelerate()).

    Raises:
        TypeError: ``enabled`` is not a bool, as in
            ``mlir.set_loc_tracebacks_enabled("yes")``.

    Example:
        ::

            import callsite.mlir

            from iree.compiler import ir

            callsite.mlir.accelerate(ir)             # the switch is MLIR's, served by callsite
            callsite.mlir.set_loc_tracebacks_enabled(True)
            print(callsite.mlir.loc_tracebacks_enabled())
            callsite.mlir.set_loc_tracebacks_enabled(False)
    """
    _KNOBS.set_enabled(enabled)


def loc_tracebacks_enabled() -> bool:
    """True if MLIR's process-wide switch is on for any accelerated bindings.

    Example:
        ::

            import callsite.mlir

            print(callsite.mlir.loc_tracebacks_enabled())       # False until switched on
    """
    return _KNOBS.enabled()


def cache_info(context: Any) -> dict[str, int] | None:
    """Sizes and hit counts of `context`'s location cache (None: it has none).

    Example:
        ::

            import callsite.mlir
            from iree.compiler import ir

            with ir.Context() as ctx, ir.Location.unknown():
                loc = callsite.mlir.location()
                print(callsite.mlir.cache_info(ctx))
    """
    return _m.cache_info(context)


def clear_caches() -> None:
    """Drops every cached location (of every context).

    Example:
        ::

            import callsite.mlir

            callsite.mlir.clear_caches()             # e.g. between compilations of a long-lived process
    """
    _m.clear_caches()


#: Dotted names of the ``ir`` modules of the bindings callsite knows by name (others are
#: recognised by structure).
KNOWN_IR_MODULES = _detect.KNOWN_IR_MODULES
