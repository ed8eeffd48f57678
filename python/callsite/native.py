"""callsite.native — native and JIT frames, reified only when someone asks.

An interpreter, compiler or JIT pushes lightweight frames (an executable + an integer state)
that appear, in call order, in every ``callsite.capture()`` and in Python exception tracebacks.
The executable's reifier turns a state into a source location only when a frame is
symbolized; results are cached per (executable, state)::

    from callsite import native

    def where(pc):                       # called lazily, once per pc
        op = program.ops[pc]
        return native.Location(program.filename, op.line, colno=op.col)

    exe = native.Executable("mydsl", where, kind="interpreter")
    with exe.frame() as frame:           # or native.frame(exe); or @native.frame(exe)
        for pc, op in enumerate(program.ops):
            frame.state = pc             # cheap: a store
            run(op)                      # captures/tracebacks in here show the DSL line

C++ code uses the same shadow stack through ``callsite/native_frame.h`` and ``callsite/api.h``
(``python -m callsite --cmake-dir`` or ``callsite.cmake_dir()`` prints the CMake package directory).
"""
from __future__ import annotations

from collections.abc import Mapping
from types import CodeType
from typing import NamedTuple

from ._callsite import native as _n

Executable = _n.Executable
NativeFrame = _n.NativeFrame
FramedFunction = _n.FramedFunction
ReificationWarning = _n.ReificationWarning
# What ``frame.f_locals`` is for a visible frame of an executable made with ``locals=``
# (docs/native.md, "Variables"): registered so that isinstance(..., Mapping) holds.
FrameLocals = _n.FrameLocals
Mapping.register(FrameLocals)


# A builtin, not a wrapper: an interpreter calls it once per guest call.
current = _n.current


def stack() -> list[tuple[str, str, int]]:
    """``[(name, kind, state), ...]``: the native frames a capture here would see, innermost
    first.

    Example:
        ::

            from callsite import native

            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1), kind="dsl")
            with native.frame(exe, 5):
                print(native.stack())                            # [('prog', 'dsl', 5)]
    """
    return _n.stack()


def cache_info() -> dict[str, int]:
    """Reification cache counters: executables, entries, hits, misses, and generation: the
    entries per generation of an executable's cache (at most two generations are kept, so
    states that never repeat do not grow it without bound).

    Example:
        ::

            from callsite import native

            print(sorted(native.cache_info()))
    """
    return _n.cache_info()


def track_greenlets() -> None:
    """Follows greenlet switches on this thread from now on (done by itself when greenlet is
    imported before the first native frame is pushed).

    Example:
        ::

            from callsite import native

            native.track_greenlets()    # before switching greenlets that push native frames
    """
    _n.track_greenlets()


def visible_frames_refusal() -> str | None:
    """None when ``Executable(..., visible=True)`` makes real interpreter frames here, else
    why frames stay on callsite's shadow stack.

    Example:
        ::

            from callsite import native

            print(native.visible_frames_refusal())               # None where available
    """
    return _n.visible_frames_refusal()


class _LocationFields(NamedTuple):
    filename: str
    lineno: int | None
    name: str | None = None
    qualname: str | None = None
    end_lineno: int | None = None
    colno: int | None = None
    end_colno: int | None = None
    code: CodeType | None = None


#: Lines and columns are C ints in CPython's code objects and in callsite's cache.
_MAX_POSITION = 2**31 - 1


def _check_str(field: str, value: object, optional: bool) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str):
        raise TypeError(f"Location {field} must be a str{' or None' if optional else ''}, "
                        f"not {type(value).__name__}")


def _check_position(field: str, value: object) -> None:
    if value is None:
        return
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Location {field} must be an int or None, not {type(value).__name__}")
    if not 0 <= value <= _MAX_POSITION:
        raise ValueError(f"Location {field} must be in [0, {_MAX_POSITION}] or None, got {value}")


class Location(_LocationFields):
    """What a reifier returns (a plain tuple in this order works too; None: unknown).

    Lines are 1-based, columns 0-based with an exclusive end, as ``code.co_positions()``.
    ``name``/``qualname`` default to the executable's name. ``code`` is an optional real
    code object for introspection (never used to build traceback frames). Checked when
    built: TypeError or ValueError naming the field.

    Raises:
        TypeError: ``filename`` or ``lineno`` is missing, as in ``native.Location()``.

    Example:
        ::

            from callsite import native

            loc = native.Location("prog.dsl", 3, colno=4, end_colno=9)
            print(loc.filename, loc.lineno, loc.colno)
    """

    __slots__ = ()

    def __new__(cls, filename: str, lineno: int | None, name: str | None = None,
                qualname: str | None = None, end_lineno: int | None = None,
                colno: int | None = None, end_colno: int | None = None,
                code: CodeType | None = None) -> Location:
        _check_str("filename", filename, optional=False)
        if "\x00" in filename:
            raise ValueError(f"Location filename must not contain a NUL character (CPython's "
                             f"file readers stop there), got {filename!r}")
        _check_str("name", name, optional=True)
        _check_str("qualname", qualname, optional=True)
        for field, value in (("lineno", lineno), ("end_lineno", end_lineno),
                             ("colno", colno), ("end_colno", end_colno)):
            _check_position(field, value)
        if code is not None and not isinstance(code, CodeType):
            raise TypeError(f"Location code must be a code object or None, "
                            f"not {type(code).__name__}")
        return super().__new__(cls, filename, lineno, name, qualname, end_lineno, colno,
                               end_colno, code)


def visible_frames_available() -> bool:
    """True when ``Executable(..., visible=True)`` makes real interpreter frames here (else
    frames stay on callsite's shadow stack; ``visible_frames_refusal()`` says why).

    Example:
        ::

            from callsite import native

            print(native.visible_frames_available())             # True on 3.12-3.15
    """
    return visible_frames_refusal() is None


def frame(executable: Executable, state: int = 0) -> NativeFrame:
    """A frame of ``executable``: a context manager (``with native.frame(exe) as f:``) or a
    decorator (``@native.frame(exe)``: each call runs in a fresh frame, reachable through
    ``native.current()``).

    Raises:
        TypeError: ``executable`` is not an Executable, as in ``native.frame(3)``.
        TypeError: ``state`` is not an int, as in ``native.frame(exe, "start")``.

    Example:
        ::

            import callsite
            from callsite import native

            exe = native.Executable("prog", lambda pc: native.Location("prog.dsl", pc + 1))
            with native.frame(exe, 2):
                print(callsite.capture()[0].lineno)              # 3
    """
    if not isinstance(executable, Executable):
        raise TypeError(f"frame(): executable must be a callsite.native.Executable, "
                        f"not {type(executable).__name__}")
    return executable.frame(state)


__all__ = [
    "Executable",
    "FrameLocals",
    "FramedFunction",
    "Location",
    "NativeFrame",
    "ReificationWarning",
    "cache_info",
    "current",
    "frame",
    "stack",
    "track_greenlets",
    "visible_frames_available",
    "visible_frames_refusal",
]
