# Stubs for callsite._callsite.tracking (used by callsite.tracking).
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any, ClassVar, Literal, final

from . import Filter, Frame

@final
class CallSite(tuple[CodeType, int, CodeType | None, Frame]):
    """One recorded call (callsite.tracking.window()): where it was made and what it called."""
    n_fields: ClassVar[int]
    n_sequence_fields: ClassVar[int]
    n_unnamed_fields: ClassVar[int]
    __match_args__: ClassVar[tuple[str, str, str, str]]
    if sys.version_info >= (3, 13):
        def __replace__(self, **changes: Any) -> CallSite: ...  # copy.replace() (3.13+)
    @property
    def code(self) -> CodeType: ...
    @property
    def offset(self) -> int: ...
    @property
    def callee(self) -> CodeType | None: ...
    @property
    def site(self) -> Frame: ...

@final
class Window:
    """One thread's window of recent call sites (internal: owned by the thread's state)."""

def enable(
    mode: Literal["auto", "monitoring", "profile"], window: int, filter: Filter | None,
    tool_id: int | None, /
) -> None: ...
def disable() -> None: ...
available_modes: Callable[[], dict[str, str | None]]
auto_mode: Callable[[], Literal["monitoring", "profile"]]
def window(
    skip: int = 0, limit: int | None = None, *, filter: Filter | None = None
) -> list[CallSite]: ...
def last(filter: Filter | None = None, /) -> Frame | None: ...
def status() -> dict[str, Any]: ...
def clear() -> None: ...
def refresh() -> None: ...
