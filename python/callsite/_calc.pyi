# Stubs for callsite._calc: the calc interpreter of examples/interp/, built as a private
# extension of its own (the native-frames demo and the tests run it).
from collections.abc import Callable, Mapping
from typing import Any, final

from .native import Executable

@final
class Program:
    """A parsed calc program; host maps names to the Python callables it may call."""
    def __new__(cls, source: str, filename: str = "<calc>",
                host: Mapping[str, Callable[..., Any]] | None = None) -> Program: ...
    def call(self, name: str, /, *args: float) -> float: ...
    @property
    def executables(self) -> tuple[Executable, ...]: ...
