"""Waiting for a module without importing it: one meta path finder, shared by every integration,
that claims nothing. For a watched name it asks the finders after it for the spec and wraps the
loader, so each watch's `notify(module)` runs once the module has executed. Every other import
costs one lookup.

Standard library only, nothing that site.py has not already imported: the start-up hook
(python/startup/_callsite_startup.py) loads this file in every process that sets a switch,
without importing the callsite package. Hence no ``from __future__ import annotations`` (it
imports __future__) and no ``types``/``typing`` (not loaded by site.py): every annotation is a
string.
"""
import sys

TYPE_CHECKING = False  # typing is not imported at start-up: the annotations are strings
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any


class Watch:
    """What one integration waits for: the module names it wants (`wants(fullname)`), the specs
    worth wrapping (`accepts(spec)`: where the module lives, it is not run), and what to call
    with each executed module."""

    __slots__ = ("key", "wants", "accepts", "notify")

    def __init__(self, key: "str", wants: "Callable[[str], bool]",
                 notify: "Callable[[ModuleType], None]",
                 accepts: "Callable[[ModuleSpec], bool] | None" = None) -> None:
        self.key = key
        self.wants = wants
        self.notify = notify
        self.accepts = accepts


class _NotifyingLoader:
    """Runs the real loader, then tells the watches about the module it executed."""

    def __init__(self, loader: "Any", watches: "list[Watch]") -> None:
        self._loader = loader
        self._watches = watches

    def create_module(self, spec: "ModuleSpec") -> "ModuleType | None":
        module: "ModuleType | None" = self._loader.create_module(spec)
        return module

    def exec_module(self, module: "ModuleType") -> None:
        self._loader.exec_module(module)
        for watch in self._watches:
            watch.notify(module)

    def load_module(self, fullname: "str") -> "ModuleType":
        """The legacy protocol, for callers that still use it: the module is loaded by the
        real loader, then the watches are told, as after exec_module."""
        module: "ModuleType" = self._loader.load_module(fullname)
        for watch in self._watches:
            watch.notify(module)
        return module

    def __getattr__(self, name: "str") -> "Any":  # get_resource_reader, is_package, get_code...
        return getattr(self._loader, name)


class _NotifyingLegacyLoader:
    """The same for a loader of the legacy protocol only (load_module, no exec_module): the
    import system calls load_module when a loader has no exec_module, so this has none."""

    def __init__(self, loader: "Any", watches: "list[Watch]") -> None:
        self._loader = loader
        self._watches = watches

    load_module = _NotifyingLoader.load_module

    def __getattr__(self, name: "str") -> "Any":
        return getattr(self._loader, name)


class ImportWatcher:
    """The meta path finder: the watches by key, in the order they were added."""

    def __init__(self) -> None:
        self.watches: "dict[str, Watch]" = {}
        self._asking: "set[str]" = set()  # names being looked up by the finders after us

    def find_spec(self, fullname: "str", path: "Sequence[str] | None",
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if fullname in self._asking:
            return None
        wanted = [w for w in list(self.watches.values()) if w.wants(fullname)]
        if not wanted:
            return None
        self._asking.add(fullname)
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
            self._asking.discard(fullname)
        wanted = [w for w in wanted if w.accepts is None or w.accepts(spec)]
        if not wanted or spec.loader is None:
            return spec
        # A loader by protocol, not by class: importlib.abc is not loaded at start-up.
        if hasattr(spec.loader, "exec_module"):
            spec.loader = _NotifyingLoader(spec.loader, wanted)  # type: ignore[assignment]
        elif hasattr(spec.loader, "load_module"):
            spec.loader = _NotifyingLegacyLoader(spec.loader, wanted)  # type: ignore[assignment]
        return spec


def watcher() -> "ImportWatcher":
    """The process's one watcher, first on sys.meta_path (put back there if removed)."""
    found = next((f for f in sys.meta_path if isinstance(f, ImportWatcher)), None)
    if found is None:
        found = _the_watcher
        sys.meta_path.insert(0, found)
    return found


_the_watcher = ImportWatcher()


def watch(key: "str", wants: "Callable[[str], bool]", notify: "Callable[[ModuleType], None]",
          accepts: "Callable[[ModuleSpec], bool] | None" = None) -> None:
    """Calls `notify(module)` for every module imported from now on whose name `wants` and whose
    spec `accepts`; one watch per `key` (watching again replaces it)."""
    watcher().watches[key] = Watch(key, wants, notify, accepts)


def unwatch(key: "str") -> None:
    """Stops the watch `key` (the watcher stays, costing a lookup per import)."""
    for finder in sys.meta_path:
        if isinstance(finder, ImportWatcher):
            finder.watches.pop(key, None)


def watching(key: "str") -> "bool":
    """Whether the watch `key` is in force."""
    return any(isinstance(f, ImportWatcher) and key in f.watches for f in sys.meta_path)
