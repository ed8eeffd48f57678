"""Waiting for ``torch.fx.proxy`` without importing torch: callsite's import watcher
(callsite._import_watch), once that one module has executed, calls the listener with it.

Standard library only, nothing that site.py has not already imported: the start-up hook loads
this file in every process that sets CALLSITE_TORCH. Hence no
``from __future__ import annotations`` (it imports __future__): every annotation is a string.
"""
import sys

TYPE_CHECKING = False  # typing is not imported at start-up: the annotations are strings
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType

#: The module whose TracerBase.create_node records every FX node's stack trace.
WATCHED = "torch.fx.proxy"

#: torch versions whose internals were read and matched against the shapes callsite
#: reproduces (callsite.torch._recognise); others are served where their code has those shapes.
CHECKED_VERSIONS = ("2.13.0",)

#: The key of this integration's watch (callsite._import_watch).
WATCH_KEY = "torch"


def _is_watched(fullname: "str") -> "bool":
    return fullname == WATCHED


def _notify_once(listener: "Callable[[ModuleType], None]") -> "Callable[[ModuleType], None]":
    def notify(module: "ModuleType") -> None:
        from callsite._import_watch import unwatch

        unwatch(WATCH_KEY)
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
    # Absolute and with a from-list: the start-up hook has put the module in sys.modules
    # without the callsite package, which this form does not import.
    from callsite._import_watch import watch

    watch(WATCH_KEY, _is_watched, _notify_once(listener))


def waiting() -> "bool":
    """Whether torch.fx.proxy's import is being waited for."""
    from callsite._import_watch import watching

    return watching(WATCH_KEY)


def start(accelerate: "Callable[[ModuleType], None]") -> None:
    """The start-up hook's entry (CALLSITE_TORCH on): `accelerate(torch.fx.proxy)` once it is
    imported; nothing is imported before that."""
    when_proxy_imported(accelerate)
