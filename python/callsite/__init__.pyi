# Stubs for the callsite package: the runtime module loads its submodules and doctor() lazily
# (PEP 562 __getattr__), which a type checker cannot follow.
from . import mlir as mlir, native as native, tracking as tracking
from ._backend import (
    get_backend as get_backend,
    internal_backend_refusal as internal_backend_refusal,
    set_backend as set_backend,
)
from ._callsite import (
    Filter as Filter,
    Frame as Frame,
    Traceback as Traceback,
    boundary as boundary,
    capture as capture,
    layout_name as layout_name,
)
from ._cli.doctor import doctor as doctor
from ._paths import cmake_dir as cmake_dir, include_dir as include_dir
from ._version import __version__ as __version__
from ._warnings import BackendWarning as BackendWarning, CallsiteWarning as CallsiteWarning

# The public names, listed here only: type checkers read a stub's __all__ literally and
# stubtest wants one; the runtime module derives its own (every public name it binds).
__all__ = [
    "BackendWarning",
    "CallsiteWarning",
    "Filter",
    "Frame",
    "Traceback",
    "__version__",
    "boundary",
    "capture",
    "cmake_dir",
    "doctor",
    "get_backend",
    "include_dir",
    "internal_backend_refusal",
    "layout_name",
    "set_backend",
]

def __dir__() -> list[str]: ...
