"""callsite — where in the user's Python code am I?

Fast capture of the Python call stack as raw (code, instruction offset) frames, symbolized
lazily into file/line/column ranges, rendered as MLIR locations, traceback objects or dicts.
"""


def _in_main_interpreter() -> bool:
    try:
        from _thread import _is_main_interpreter  # 3.12+
        return _is_main_interpreter()
    except ImportError:
        pass
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        return mod.get_current() == mod.get_main()
    return True


# The extension module keeps process-wide caches of Python objects, owned by the interpreter
# that loaded it. A legacy subinterpreter would be handed a copy of the main interpreter's
# module (single-phase init) without the extension being asked: refuse here, clearly.
if not _in_main_interpreter():
    raise ImportError("callsite cannot be imported in a subinterpreter: it supports the main "
                      "interpreter only")

from ._callsite import (  # noqa: E402
    Filter,
    Frame,
    Traceback,
    capture,
    get_backend,
    internal_backend_refusal,
    layout_name,
    set_backend,
)

from . import tracking  # noqa: E402  (callsite.tracking: tracked call windows, issue 5)
from . import native  # noqa: E402  (callsite.native: native and JIT frames, issue 6)

__all__ = [
    "Filter",
    "Frame",
    "Traceback",
    "capture",
    "get_backend",
    "internal_backend_refusal",
    "layout_name",
    "set_backend",
]
__version__ = "0.1.0"
