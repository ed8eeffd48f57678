"""callsite.mlir.status(): what callsite.mlir does in this process and which MLIR bindings it
finds, for ``python -m callsite doctor``. Imports no bindings to find out."""
from __future__ import annotations

import importlib.util
import os
import sys
from typing import Any

from .. import _switches
from ._accelerate import has_traceback_knobs
from ._detect import KNOWN_IR_MODULES, installed_ir_modules, waiting
from ._state import KNOBS


def status() -> dict[str, Any]:
    """What callsite.mlir does here in one line, the bindings callsite.mlir.bindings() finds
    (each with its distribution and version, whether accelerated or wrapped now, and how its
    locations are built: MLIR's C API, or the bindings' Python API and why), every MLIR bindings
    installed (found by structure, never imported to find out), the other known bindings
    modules, and a hint when there are none.

    Example:
        ::

            import callsite.mlir

            print(callsite.mlir.status()["status"])   # what `python -m callsite doctor` shows for MLIR
    """
    found = _bindings_found()
    installed = _installed()
    not_imported = {name: _module_status(name) for name in KNOWN_IR_MODULES
                    if name not in found and name not in installed}
    return {"status": _summary(found),
            "bindings": found,
            "installed": installed,
            "other_known": not_imported,
            "hint": 'pip install "callsite[mlir]"'
            if not found and not installed
            and set(not_imported.values()) <= {"not installed"} else None}


def _distribution_of(module: Any) -> str | None:
    """'name version' of the installed distribution that holds `module`'s file, or None."""
    return _distribution_of_file(str(getattr(module, "__file__", "") or ""), module.__name__)


def _distribution_of_file(file: str, name: str) -> str | None:
    """'name version' of the installed distribution that holds `file` (of the module `name`)."""
    import importlib.metadata as metadata

    path = os.path.realpath(file)
    top = name.partition(".")[0]
    for distribution in metadata.packages_distributions().get(top, []):
        try:
            dist = metadata.distribution(distribution)
        except metadata.PackageNotFoundError:
            continue
        for entry in dist.files or ():
            if os.path.realpath(str(dist.locate_file(entry))) == path:
                return f"{dist.metadata['Name']} {dist.version}"
    return None


def _bindings_found() -> dict[str, dict[str, Any]]:
    """Every set of bindings callsite.mlir.bindings() finds (imported, recognised by
    structure, or registered with use()), with its distribution and version, whether
    callsite serves its switches (accelerated) or its wrappers are in place now, and how it
    builds their locations (MLIR's C API, or the bindings' Python API and why)."""
    from . import bindings  # the package's facade, which imports this module

    try:
        found = bindings()
    except ImportError:
        return {}
    report = {}
    for b in found:
        ir = b.ir
        report[ir.__name__] = {
            "distribution": _distribution_of(ir),
            "accelerated": id(b) in KNOBS.accelerated,
            "wrappers_installed": b.installed,
            "mlir_switch": has_traceback_knobs(ir),
            "locations": b.location_api,
        }
    return report


def _installed() -> dict[str, dict[str, Any]]:
    """Every MLIR bindings installed on sys.path, found by structure and imported by none
    (a package folder with an `ir` module beside a `_mlir_libs` folder of extension modules,
    callsite.mlir._detect.installed_ir_modules), with its folder and distribution."""
    report = {}
    for name, folder in installed_ir_modules():
        ir_file = os.path.join(folder, "ir.py")
        if not os.path.isfile(ir_file):
            ir_file = os.path.join(folder, "ir", "__init__.py")
        report[name] = {"folder": folder, "distribution": _distribution_of_file(ir_file, name),
                        "imported": name in sys.modules}
    return report


def _summary(found: dict[str, dict[str, Any]]) -> str:
    """What callsite.mlir does in this process, in one line."""
    variable = _switches.BY_INTEGRATION["mlir"].variable
    served = [name for name, b in found.items() if b["accelerated"]]
    if served:
        return f"on: MLIR's traceback switches of {', '.join(served)} build callsite's locations"
    if waiting() and KNOBS.accelerate_new:
        return "on once MLIR bindings are imported (accelerate())"
    if waiting():
        return "watching imports of MLIR bindings (auto_locations() scopes)"
    return (f"off ({variable}=1 or callsite.mlir.accelerate() turns MLIR's switches on; "
            "auto_locations() works without it)")


def _module_status(module: str) -> str:
    """'imported', 'importable' or 'not installed', without importing anything: finding a
    dotted name would import its parents (jaxlib's is slow), so the parent's directory is
    searched for the rest of the path."""
    if module in sys.modules:
        return "imported"
    top, _, rest = module.partition(".")
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        return "not installed"
    parts = rest.split(".")
    for base in spec.submodule_search_locations or ():
        path = os.path.join(base, *parts)
        if os.path.isdir(path) or any(
                name.startswith(parts[-1] + ".") for name in _listdir(os.path.dirname(path))):
            return "importable"
    return "not installed"


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []
