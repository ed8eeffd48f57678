# Stubs for callsite._callsite.native (re-exported by callsite.native).
from collections.abc import Callable
from typing import Any, Literal, final

from .._warnings import CallsiteWarning
from . import Frame

_Reified = tuple[Any, ...] | None

@final
class Executable:
    """One kind of native code; reifier(state) -> Location | tuple | None, called lazily."""
    def __new__(
        cls,
        name: str,
        reifier: Callable[[int], _Reified] | None = None,
        *,
        kind: str = "python",
        visible: bool = False,
        locations: list[tuple[Any, ...]] | tuple[tuple[Any, ...], ...] | None = None,
        states: int | None = None,
    ) -> Executable: ...
    @property
    def name(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def reifier(self) -> Callable[[int], _Reified] | None: ...
    def frame(self, state: int = 0) -> NativeFrame: ...
    def reify(self, state: int, /) -> Frame: ...

@final
class NativeFrame:
    """A frame pushed from Python: a context manager, or a decorator (fresh frame per call)."""
    def __new__(cls, executable: Executable, state: int = 0) -> NativeFrame: ...
    state: int
    @property
    def executable(self) -> Executable: ...
    @property
    def active(self) -> bool: ...
    def push(self) -> None: ...
    def pop(self) -> None: ...
    def __enter__(self) -> NativeFrame: ...
    def __exit__(self, *exc: object) -> Literal[False]: ...
    def __call__(self, fn: Callable[..., Any], /) -> FramedFunction: ...

@final
class FramedFunction:
    """A function whose every call runs in a fresh native frame."""
    @property
    def __wrapped__(self) -> Callable[..., Any]: ...
    @property
    def executable(self) -> Executable: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, instance: object, owner: type | None = None, /) -> Any: ...

class ReificationWarning(CallsiteWarning, RuntimeWarning): ...

# nanobind function objects: callsite.native wraps the public ones in functions.
current: Callable[[], NativeFrame | None]
stack: Callable[[], list[tuple[str, str, int]]]
cache_info: Callable[[], dict[str, int]]
track_greenlets: Callable[[], None]
visible_frames_refusal: Callable[[], str | None]

