"""callsite.mlir — the user's source location on every op built through MLIR's Python bindings.

    import callsite.mlir
    with ir.Context(), ir.Location.unknown(), callsite.mlir.auto_locations():
        ...  # every op built without loc= gets the caller's stack as MLIR's loc_tracebacks() would

Works with any distribution of the bindings (``mlir.ir``, ``iree.compiler.ir``,
``jaxlib.mlir.ir`` or a module passed to :func:`use`). Locations are built by C++ wrappers of the
bindings' op builders and cached per context, per call site and per frame.
"""
from __future__ import annotations

import contextlib
import importlib
import sys
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from ._callsite import Filter
from ._callsite import mlir as _m

MlirBindings = _m.MlirBindings
MlirSettings = _m.MlirSettings

__all__ = [
    "CANDIDATES",
    "MAX_DEPTH",
    "auto_locations",
    "bindings",
    "cache_info",
    "clear_caches",
    "loc_tracebacks",
    "location",
    "register_traceback_file_exclusion",
    "register_traceback_file_inclusion",
    "use",
]

#: Where the bindings are looked for, in order.
CANDIDATES = ("mlir.ir", "iree.compiler.ir", "jaxlib.mlir.ir")
#: MLIR's PyGlobals::TracebackLoc::kMaxFrames: loc_tracebacks(max_depth=) is clamped to it.
MAX_DEPTH = 512

location = _m.location
_by_module: dict[int, MlirBindings] = {}


def use(ir: ModuleType | str) -> MlirBindings:
    """The bindings of an ``ir`` module (or its dotted name), registered for callsite."""
    if isinstance(ir, str):
        ir = importlib.import_module(ir)
    found = _by_module.get(id(ir))
    if found is None:
        found = _by_module[id(ir)] = MlirBindings(ir)
    return found


def bindings(ir: ModuleType | str | None = None) -> list[MlirBindings]:
    """The bindings auto_locations applies to: `ir`'s if given; else every candidate already
    imported and every module passed to use(); else the first candidate that imports. Raises
    ImportError when there is none."""
    if ir is not None:
        return [use(ir)]
    for name in CANDIDATES:
        if name in sys.modules:
            use(sys.modules[name])
    if _by_module:
        return list(_by_module.values())
    errors = []
    for name in CANDIDATES:
        try:
            return [use(name)]
        except ImportError as e:
            errors.append(f"{name}: {e}")
    raise ImportError("callsite.mlir: no MLIR Python bindings found (pip install iree-base-compiler, "
                      "or pass the ir module): " + "; ".join(errors))


def _action(value: Any, choices: tuple[str, str], what: str) -> bool:
    """False for choices[0], True for choices[1]; accepts the strings or MLIR's enum members."""
    name = getattr(value, "name", value)
    if isinstance(name, str) and name.lower() in choices:
        return name.lower() == choices[1]
    raise ValueError(f"{what} must be one of {choices!r} (or MLIR's enum), not {value!r}")


@contextlib.contextmanager
def auto_locations(
    filter: Filter | None = None,
    *,
    limit: int | None = None,
    on_explicit: Any = "use_explicit",
    current_loc: Any = "fallback",
    ir: ModuleType | str | None = None,
) -> Iterator[MlirSettings]:
    """Ops built in this scope without ``loc=`` get the caller's stack as their location.

    filter: which frames count (default Filter.default(): no generated *_ops_gen.py, no callsite);
    limit: at most this many kept frames (default: the filter's). on_explicit: "use_explicit"
    keeps an explicit loc=, "use_traceback" replaces it. current_loc: "fallback" ignores an
    enclosing ``with Location``, "nameloc_wrap" wraps the result in its NameLoc names. The
    settings are the calling thread's (and asyncio task's) only; scopes nest.
    """
    settings = MlirSettings(
        filter,
        limit,
        use_traceback=_action(on_explicit, ("use_explicit", "use_traceback"), "on_explicit"),
        nameloc_wrap=_action(current_loc, ("fallback", "nameloc_wrap"), "current_loc"),
    )
    acquired = []
    token = _m.settings.set(settings)
    try:
        for b in bindings(ir):
            b.acquire()
            acquired.append(b)
        yield settings
    finally:
        _m.settings.reset(token)
        for b in acquired:
            b.release()


def _enclosing_limit() -> int:
    current = _m.settings.get(None)
    if isinstance(current, MlirSettings):
        return current.limit if current.limit is not None else current.filter.limit
    return Filter.default().limit


def loc_tracebacks(
    *,
    max_depth: int | None = None,
    on_explicit: Any = None,
    current_loc: Any = None,
    on_explicit_actn: Any = None,
    current_loc_actn: Any = None,
    ir: ModuleType | str | None = None,
):
    """Drop-in for MLIR's ``ir.loc_tracebacks()``: same arguments (both MLIR's
    ``on_explicit_actn``/``current_loc_actn`` names and the short ones), same meaning, the
    rules of Filter.default() (see register_traceback_file_inclusion/exclusion). max_depth=None
    keeps the enclosing scope's limit; it is clamped to 512 as in MLIR. Unlike MLIR's switch,
    the scope is the calling thread's/task's only."""
    explicit = on_explicit if on_explicit is not None else on_explicit_actn
    current = current_loc if current_loc is not None else current_loc_actn
    depth = _enclosing_limit() if max_depth is None else max_depth
    if depth is None or depth > MAX_DEPTH:  # MLIR: set_loc_tracebacks_frame_limit clamps
        depth = MAX_DEPTH
    return auto_locations(
        Filter.default(),
        limit=depth,
        on_explicit="use_explicit" if explicit is None else explicit,
        current_loc="fallback" if current is None else current,
        ir=ir,
    )


def register_traceback_file_inclusion(filename: str) -> None:
    """As MLIR's ``_globals.register_traceback_file_inclusion``, on Filter.default()."""
    Filter.default().include_file(filename)


def register_traceback_file_exclusion(filename: str) -> None:
    """As MLIR's ``_globals.register_traceback_file_exclusion``, on Filter.default()."""
    Filter.default().exclude_file(filename)


def cache_info(context: Any) -> dict[str, int] | None:
    """Sizes and hit counts of `context`'s location cache (None: it has none)."""
    return _m.cache_info(context)


def clear_caches() -> None:
    """Drops every cached location (of every context)."""
    _m.clear_caches()
