# Stubs for callsite._callsite.mlir (used by callsite.mlir).
from collections.abc import Callable
from contextvars import ContextVar
from types import ModuleType
from typing import Any, final

from . import Filter, Traceback, boundary

@final
class MlirBindings:
    """One `ir` module of MLIR Python bindings as callsite uses it (one object per module)."""
    def __new__(cls, ir: ModuleType) -> MlirBindings: ...
    @property
    def ir(self) -> ModuleType: ...
    @property
    def installed(self) -> bool: ...
    @property
    def refs_per_location(self) -> int: ...
    @property
    def location_api(self) -> str | None: ...
    @property
    def _direct_current(self) -> bool: ...
    process_settings: MlirSettings | None
    def acquire(self) -> None: ...
    def release(self) -> None: ...
    def _use_python_api(self, flag: object, /) -> None: ...

@final
class MlirSettings:
    """One auto_locations scope (immutable)."""
    def __new__(
        cls,
        filter: Filter | None = None,
        limit: int | None = None,
        *,
        use_traceback: bool = False,
        nameloc_wrap: bool = False,
        window: bool = False,
    ) -> MlirSettings: ...
    @property
    def filter(self) -> Filter: ...
    @property
    def limit(self) -> int | None: ...
    @property
    def use_traceback(self) -> bool: ...
    @property
    def nameloc_wrap(self) -> bool: ...
    @property
    def window(self) -> bool: ...

settings: ContextVar[MlirSettings | None]

def location(
    source: Filter | Traceback | None = None,
    /,
    *,
    filter: Filter | None = None,
    skip: int = 0,
    context: Any = None,
    limit: int | None = None,
) -> Any: ...  # an ir.Location of the bindings in use
@final
class _MethodInjector:
    """The wrapper put in place of OpView.__init__ (not instantiable)."""
    __wrapped__: Callable[..., Any]
    @property
    def __name__(self) -> str: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
@final
class _FunctionInjector:
    """The wrapper put in place of the other op builders (not instantiable)."""
    __wrapped__: Callable[..., Any]
    @property
    def __name__(self) -> str: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
sweep: Callable[[], int]
_set_bindings_detector: Callable[[Callable[[], object] | None], None]
_boundary: Callable[[object, str], boundary]
clear_caches: Callable[[], None]
cache_count: Callable[[], int]
cache_info: Callable[[Any], dict[str, int] | None]

