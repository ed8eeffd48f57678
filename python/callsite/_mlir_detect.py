"""Finding MLIR Python bindings without importing any: the ``ir`` modules already loaded, and
the ones imported later (a meta path finder that watches ``*.ir`` imports).

Bindings are recognised by what they are, not by name: a module whose namespace holds the
classes ``Context``, ``Location``, ``Operation``, ``OpView`` and ``Module`` defined by a native
extension under a ``_mlir_libs`` package (the layout every distribution built from MLIR's
``mlir/python`` tree has: ``mlir``, ``iree.compiler``, ``jaxlib.mlir``, ``circt``,
``cutlass._mlir``, ``torch_mlir``...). Only module namespaces are read (``vars()``), so no
lazy attribute hook of an unrelated module runs.
"""
import os
import sys

TYPE_CHECKING = False  # typing is not imported at start-up: the annotations are strings
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType
    from typing import Any

# Standard library only, nothing that site.py has not already imported: the CALLSITE_MLIR
# start-up hook loads this file in every process (see _callsite_mlir_startup.py). Hence no
# `from __future__ import annotations` (it imports __future__) and no `types` (not loaded by
# site.py either): every annotation is a string.

#: Names the bindings are known under (detection does not depend on them: they are checked
#: first and named in the error when nothing is loaded).
KNOWN_IR_MODULES = (
    "mlir.ir",
    "iree.compiler.ir",
    "jaxlib.mlir.ir",
    "circt.ir",
    "pycde.circt.ir",
    "cutlass._mlir.ir",
    "torch_mlir.ir",
)

#: The start-up switch (python/startup/callsite-mlir.pth) and the values it accepts, compared
#: without surrounding whitespace and case. Unset is off.
VARIABLE = "CALLSITE_MLIR"
ON_VALUES = ("1", "true", "on", "yes")
OFF_VALUES = ("0", "false", "off", "no", "")


def switch_value(environ: "Any") -> "bool":
    """True for an on-value of CALLSITE_MLIR, False for an off-value or unset; any other value
    is a ValueError naming the variable, the value and the accepted values."""
    value = environ.get(VARIABLE)
    if value is None:
        return False
    word = value.strip().lower()
    if word in ON_VALUES or word in OFF_VALUES:
        return word in ON_VALUES
    raise ValueError(f"{VARIABLE}={value!r} is not a switch value: on is one of "
                     f"{', '.join(ON_VALUES)}, off one of {', '.join(OFF_VALUES[:-1])} or empty "
                     f"(case and surrounding spaces ignored)")


_REQUIRED_CLASSES = ("Context", "Location", "Operation", "OpView", "Module")


def is_mlir_ir(module: "object") -> "bool":
    """True if `module` is the ``ir`` module of upstream-style MLIR Python bindings."""
    try:
        namespace = vars(module)
    except TypeError:
        return False
    classes = [namespace.get(name) for name in _REQUIRED_CLASSES]
    if not all(isinstance(c, type) for c in classes):
        return False
    # The native classes live in `<package>._mlir_libs._mlir.ir` (nanobind sets __module__).
    return "_mlir_libs" in str(getattr(namespace["Location"], "__module__", ""))


def _public_first(name: "str") -> "tuple[bool, int, str]":
    # `<pkg>.ir` re-exports `<pkg>._mlir_libs._mlir.ir`: prefer the public module, then the
    # shortest name (pycde.circt.ir re-exports circt.ir's classes under a longer name).
    return ("_mlir_libs" in name, len(name), name)


def loaded_ir_modules() -> "list[ModuleType]":
    """Every distinct set of bindings already imported: one ``ir`` module per OpView class."""
    found: "dict[int, tuple[tuple[bool, int, str], ModuleType]]" = {}
    for name, module in list(sys.modules.items()):
        if module is None or not (name == "ir" or name.endswith(".ir") or name in KNOWN_IR_MODULES):
            continue
        if not is_mlir_ir(module):
            continue
        key = id(vars(module)["OpView"])
        rank = _public_first(name)
        if key not in found or rank < found[key][0]:
            found[key] = (rank, module)
    return [module for _, module in sorted(found.values(), key=lambda item: item[0])]


def may_be_bindings(spec: "ModuleSpec") -> "bool":
    """Whether the module `spec` finds can be an MLIR bindings ``ir`` module, by where it lives
    (the module is not run): every distribution built from MLIR's ``mlir/python`` tree puts
    ``ir.py`` beside its ``_mlir_libs`` package (``<pkg>/ir.py``, ``<pkg>/_mlir_libs/``), and the
    native ``ir`` inside it. Any other ``ir`` keeps its own loader."""
    origin = spec.origin
    if not isinstance(origin, str) or not spec.has_location:
        return False
    where = os.path.dirname(origin)
    if spec.submodule_search_locations is not None:  # a package: <pkg>/ir/__init__.py
        where = os.path.dirname(where)
    return (os.path.isdir(os.path.join(where, "_mlir_libs"))
            or "_mlir_libs" in where.split(os.sep))


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
        if is_mlir_ir(module):
            self._notify(module)

    def load_module(self, fullname: "str") -> "ModuleType":
        """The legacy protocol, for callers that still use it."""
        module: "ModuleType" = self._loader.load_module(fullname)
        return module

    def __getattr__(self, name: "str") -> "Any":  # get_resource_reader, is_package, get_code...
        return getattr(self._loader, name)


class IrImportWatcher:
    """A meta path finder that claims nothing: for a module named ``ir`` or ``*.ir`` it asks
    the finders after it for the spec and wraps the loader, so `notify(module)` runs once the
    bindings have been imported. Other imports cost one string comparison."""

    def __init__(self, notify: "Callable[[ModuleType], None]") -> None:
        self._notify = notify
        self._asking: "set[str]" = set()  # names being looked up by the finders after us

    def find_spec(self, fullname: "str", path: "Sequence[str] | None",
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if not (fullname == "ir" or fullname.endswith(".ir")) or fullname in self._asking:
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
        if spec.loader is None or not hasattr(spec.loader, "exec_module") or not may_be_bindings(spec):
            return spec
        # A loader by protocol, not by class: importlib.abc is not loaded at start-up.
        spec.loader = _NotifyingLoader(spec.loader, self._notify)  # type: ignore[assignment]
        return spec


_watcher: "IrImportWatcher | None" = None
_listeners: "list[Callable[[ModuleType], None]]" = []  # callables taking the new ir module


def _dispatch(module: "ModuleType") -> None:
    for listener in list(_listeners):
        try:
            listener(module)
        except Exception as error:  # never break the program's own import of its bindings
            import warnings

            warnings.warn(f"callsite.mlir: not attached to {module.__name__}: {error!r}",
                          RuntimeWarning, stacklevel=2)


def watch_imports(listener: "Callable[[ModuleType], None]") -> None:
    """Calls `listener(ir_module)` for every MLIR bindings module imported from now on."""
    global _watcher
    if listener not in _listeners:
        _listeners.append(listener)
    if _watcher is None:
        _watcher = IrImportWatcher(_dispatch)
    if _watcher not in sys.meta_path:
        sys.meta_path.insert(0, _watcher)


def none_loaded_message() -> "str":
    return ("callsite.mlir: no MLIR Python bindings are imported (looked for an `ir` module with "
            "Context, Location, Operation, OpView and Module classes from a `_mlir_libs` "
            "extension, e.g. " + ", ".join(KNOWN_IR_MODULES) + "). Import your bindings "
            "before this call (e.g. `from iree.compiler import ir`), or pass ir=<module>.")
