"""Waiting for ``torch.fx.proxy`` without importing torch: a meta path finder that claims
nothing and, once that one module has executed, calls the listener with it.

Standard library only, nothing that site.py has not already imported: the CALLSITE_TORCH
start-up hook loads this file in every process that sets the variable. Hence no
``from __future__ import annotations`` (it imports __future__): every annotation is a string.
"""
import sys

TYPE_CHECKING = False  # typing is not imported at start-up: the annotations are strings
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

#: The module whose TracerBase.create_node records every FX node's stack trace.
WATCHED = "torch.fx.proxy"

#: torch versions whose internals were read and matched against the shapes callsite
#: reproduces (callsite._torch_recognise); others are served where their code has those shapes.
CHECKED_VERSIONS = ("2.13.0",)

#: The start-up switch and its accepted values.
VARIABLE = "CALLSITE_TORCH"


def switch_error(environ: "Any") -> "str | None":
    """The error for a value of the variable other than unset, empty, "0" or "1", naming the
    variable; else None."""
    value = environ.get(VARIABLE) or "0"
    if value not in ("0", "1"):
        return f"{VARIABLE} must be 0 or 1 (or unset), not {value!r}"
    return None


#: The bad values switch_value() has raised for: a venv's site-packages can be processed twice
#: (seen under two paths), running the start-up hook twice in one process, and this module,
#: registered in sys.modules by the first run, is the one the second run finds.
_reported: "set[str]" = set()


def switch_value(environ: "Any") -> "bool":
    """False for unset/empty/"0", True for "1"; any other value is a ValueError naming the
    variable, raised once per process and value (asked again, it is off: the error was given)."""
    error = switch_error(environ)
    if error is None:
        return bool(environ.get(VARIABLE) == "1")
    value = str(environ.get(VARIABLE))
    if value in _reported:
        return False
    _reported.add(value)
    raise ValueError(error)


class _NotifyingLoader:
    """Runs the real loader, then tells the watcher about the module it executed."""

    def __init__(self, loader: "Any", notify: "Callable[[ModuleType], None]") -> None:
        self._loader = loader
        self._notify = notify

    def create_module(self, spec: "ModuleSpec") -> "ModuleType | None":
        module: "ModuleType | None" = self._loader.create_module(spec)
        return module

    def exec_module(self, module: "ModuleType") -> None:
        self._loader.exec_module(module)
        self._notify(module)

    def __getattr__(self, name: str) -> "Any":  # get_resource_reader, is_package, get_code...
        return getattr(self._loader, name)


class ProxyImportWatcher:
    """Asks the finders after it for ``torch.fx.proxy``'s spec and wraps its loader; every
    other import costs one string comparison."""

    def __init__(self, notify: "Callable[[ModuleType], None]") -> None:
        self._notify = notify
        self._asking = False

    def find_spec(self, fullname: str, path: "Sequence[str] | None",
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if fullname != WATCHED or self._asking:
            return None
        self._asking = True
        try:
            for finder in sys.meta_path:
                if finder is self or not hasattr(finder, "find_spec"):
                    continue
                spec = finder.find_spec(fullname, path, target)
                if spec is not None:
                    break
            else:
                return None
        finally:
            self._asking = False
        if spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _NotifyingLoader(spec.loader, self._notify)  # type: ignore[assignment]
        return spec


def _notify_once(listener: "Callable[[ModuleType], None]") -> "Callable[[ModuleType], None]":
    def notify(module: "ModuleType") -> None:
        for finder in list(sys.meta_path):
            if isinstance(finder, ProxyImportWatcher):
                sys.meta_path.remove(finder)
        try:
            listener(module)
        except Exception as error:  # never break the program's own import of torch
            print(f"callsite: CALLSITE_TORCH: torch left untouched: {error!r}", file=sys.stderr)
    return notify


def when_proxy_imported(listener: "Callable[[ModuleType], None]") -> None:
    """Calls `listener(torch.fx.proxy)` now if it is loaded, else right after its import."""
    module = sys.modules.get(WATCHED)
    if module is not None:
        listener(module)
        return
    sys.meta_path.insert(0, ProxyImportWatcher(_notify_once(listener)))
