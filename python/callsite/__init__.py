"""callsite — where in the user's Python code am I?

Fast capture of the Python call stack as raw (code, instruction offset) frames, symbolized
lazily into file/line/column ranges, rendered as MLIR locations, traceback objects or dicts.
"""
from ._callsite import (
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
