"""callsite — where in the user's Python code am I?

Fast capture of the Python call stack as raw (code, instruction offset) frames, symbolized
lazily into file/line/column ranges, rendered as MLIR locations, traceback objects or dicts.

``import callsite`` loads the extension and nothing else: the submodules (``callsite.mlir``,
``callsite.tracking``, ``callsite.native``) and :func:`doctor` are imported on first use.
"""
import os as _os

# Refused here, before the extension reads it: a misspelt value would otherwise be ignored.
_requested_backend = _os.environ.get("CALLSITE_BACKEND", "")
if _requested_backend not in ("", "internal", "public"):
    raise ImportError("CALLSITE_BACKEND must be 'internal' or 'public' (or unset), "
                      f"not {_requested_backend!r}")

def _in_main_interpreter() -> bool:
    try:
        from _thread import _is_main_interpreter  # 3.12+
        return bool(_is_main_interpreter())
    except ImportError:
        pass
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            mod = __import__(name)
        except ImportError:
            continue
        return bool(mod.get_current() == mod.get_main())
    return True


# The extension module keeps process-wide caches of Python objects, owned by the interpreter
# that loaded it. A legacy subinterpreter would be handed a copy of the main interpreter's
# module (single-phase init) without the extension being asked: refuse here, clearly.
if not _in_main_interpreter():
    raise ImportError("callsite cannot be imported in a subinterpreter: it supports the main "
                      "interpreter only")

from ._callsite import Filter, Frame, Traceback, boundary, capture, layout_name  # noqa: E402
from ._callsite import internal_backend_refusal as _internal_backend_refusal  # noqa: E402
from ._warnings import BackendWarning, CallsiteWarning  # noqa: E402

# collections.abc.Sequence is _collections_abc.Sequence; the latter is loaded at start-up.
from _collections_abc import Sequence as _Sequence  # noqa: E402

_Sequence.register(Traceback)


def _detect_mlir_bindings() -> object:
    """Registers every set of MLIR bindings already imported (callsite.mlir.bindings()): the
    C++ lookups call it when a context's bindings are unknown, and import nothing themselves."""
    from .mlir import bindings

    return bindings()


_callsite.mlir._set_bindings_detector(_detect_mlir_bindings)  # noqa: F821 (imported above)
_callsite.native._set_warning_base(CallsiteWarning)  # noqa: F821

if _internal_backend_refusal() is not None and layout_name != "none":
    # A build without a layout is a known configuration; a refused one is a surprise.
    import warnings as _warnings_module

    # stacklevel 2: the importer's line (warnings skips importlib's own frames).
    _warnings_module.warn(f"callsite: using the public C API frame walk: "
                          f"{_internal_backend_refusal()}", BackendWarning, stacklevel=2)

_SUBMODULES = frozenset(("mlir", "native", "tracking"))
# Each further module of the package costs a file lookup and a load at import: these names are
# loaded on first use, then kept in the module's namespace (PEP 562 is asked once per name).
_LAZY = {"__version__": "_version", "get_backend": "_backend", "set_backend": "_backend",
         "internal_backend_refusal": "_backend", "doctor": "_cli.doctor", "cmake_dir": "_paths",
         "include_dir": "_paths"}
# The public names by rule: each name bound above without a leading underscore, and the lazy
# ones. They are listed once, in __init__.pyi (a stub's __all__ must be a literal list), and
# stubtest holds that list to this one.
__all__ = sorted(set(_LAZY).union(name for name in globals() if not name.startswith("_")))


def __getattr__(name: str) -> object:
    # PEP 562: the submodules cost import time most users of capture() never need.
    import importlib

    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | _SUBMODULES | set(_LAZY))
