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
# start-up hook loads this file in every process (see _callsite_startup.py). Hence no
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


def _is_ir_name(fullname: "str") -> "bool":
    return fullname == "ir" or fullname.endswith(".ir")


_listeners: "list[Callable[[ModuleType], None]]" = []  # callables taking the new ir module


def _dispatch(module: "ModuleType") -> None:
    if not is_mlir_ir(module):
        return
    for listener in list(_listeners):
        try:
            listener(module)
        except Exception as error:  # never break the program's own import of its bindings
            import warnings

            warnings.warn(f"callsite.mlir: not attached to {module.__name__}: {error!r}",
                          RuntimeWarning, stacklevel=2)


#: The key of this integration's watch (callsite._import_watch).
WATCH_KEY = "mlir"


def watch_imports(listener: "Callable[[ModuleType], None]") -> None:
    """Calls `listener(ir_module)` for every MLIR bindings module imported from now on: an
    ``ir`` or ``*.ir`` module that lives where bindings live (may_be_bindings) and is one
    (is_mlir_ir). Other ``ir`` modules keep their own loader."""
    # Absolute and with a from-list: the start-up hook has put the module in sys.modules
    # without the callsite package, which this form does not import.
    from callsite._import_watch import watch

    if listener not in _listeners:
        _listeners.append(listener)
    watch(WATCH_KEY, _is_ir_name, _dispatch, may_be_bindings)


_EXTENSION_SUFFIXES = (".so", ".pyd", ".dylib")


def _holds_extension(directory: "str") -> "bool":
    try:
        with os.scandir(directory) as entries:
            return any(e.name.endswith(_EXTENSION_SUFFIXES) and e.is_file() for e in entries)
    except OSError:
        return False


def installed_ir_modules(paths: "Sequence[str] | None" = None,
                         depth: "int" = 3) -> "list[tuple[str, str]]":
    """Every MLIR bindings installed on `paths` (default sys.path), found by structure and
    imported by none: a package folder (at most `depth` levels deep) holding a ``_mlir_libs``
    folder with extension modules in it and an ``ir`` module beside it, the layout of every
    distribution built from MLIR's ``mlir/python`` tree. (``<pkg>.ir``, the folder), first
    path first; a name found again on a later path is shadowed and left out."""
    found: "dict[str, str]" = {}
    for entry in (sys.path if paths is None else paths):
        root = os.path.abspath(entry or os.curdir)
        if not os.path.isdir(root):
            continue
        stack: "list[tuple[str, tuple[str, ...]]]" = [(root, ())]
        while stack:
            directory, parts = stack.pop()
            try:
                with os.scandir(directory) as it:
                    children = sorted(e.name for e in it if e.is_dir() and e.name.isidentifier())
            except OSError:
                continue
            if parts and "_mlir_libs" in children and _holds_extension(
                    os.path.join(directory, "_mlir_libs")) and (
                    os.path.isfile(os.path.join(directory, "ir.py")) or "ir" in children):
                found.setdefault(".".join(parts + ("ir",)), directory)
            if len(parts) < depth:
                stack.extend((os.path.join(directory, c), parts + (c,)) for c in reversed(children)
                             if c != "_mlir_libs" and c != "__pycache__")
    return sorted(found.items())


def none_loaded_message() -> "str":
    return ("callsite.mlir: no MLIR Python bindings are imported (looked for an `ir` module with "
            "Context, Location, Operation, OpView and Module classes from a `_mlir_libs` "
            "extension, e.g. " + ", ".join(KNOWN_IR_MODULES) + "). Import your bindings "
            "before this call (e.g. `from iree.compiler import ir`), or pass ir=<module>.")


def start(accelerate: "Callable[[ModuleType | None], None]") -> None:
    """The start-up hook's entry (CALLSITE_MLIR on): `accelerate(ir_module)` for the first
    MLIR bindings imported and every set imported afterwards (now, with None, when an earlier
    .pth imported some already)."""
    if loaded_ir_modules():
        accelerate(None)
    else:
        watch_imports(accelerate)


def waiting() -> "bool":
    """Whether MLIR bindings' imports are being watched."""
    from callsite._import_watch import watching

    return watching(WATCH_KEY)
