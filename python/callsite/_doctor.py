"""``callsite.doctor()`` / ``python -m callsite doctor``: what this installation can do, and why."""
from __future__ import annotations

import importlib.util
import os
import platform
import sys
from typing import Any

from . import _callsite, _switches
from ._version import __version__

def _backend() -> dict[str, Any]:
    in_use = _callsite.get_backend()
    refusal = _callsite.internal_backend_refusal()
    env = os.environ.get("CALLSITE_BACKEND") or None
    if in_use == "internal":
        why = f"CPython's frames read directly (layout {_callsite.layout_name})"
    elif refusal is not None:
        why = f"the internal walk was refused: {refusal}"
    elif env == "public":
        why = "CALLSITE_BACKEND=public"
    else:
        why = "selected with callsite.set_backend('public')"
    code_extra = _callsite.code_extra_refusal()
    return {"in_use": in_use, "why": why, "internal_refusal": refusal,
            "layout": _callsite.layout_name, "CALLSITE_BACKEND": env,
            "code_extra": "read directly" if code_extra is None
            else f"PyUnstable_Code_GetExtra ({code_extra})"}


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


def _mlir_bindings() -> dict[str, dict[str, Any]]:
    """Every set of bindings callsite.mlir.bindings() finds (imported, recognised by
    structure, or registered with use()), with its distribution and version, whether
    callsite serves its switches (accelerated) or its wrappers are in place now, and how it
    builds their locations (MLIR's C API, or the bindings' Python API and why)."""
    from . import mlir
    from .mlir import _accelerate
    from .mlir._state import KNOBS

    try:
        found = mlir.bindings()
    except ImportError:
        return {}
    report = {}
    for b in found:
        ir = b.ir
        report[ir.__name__] = {
            "distribution": _distribution_of(ir),
            "accelerated": id(b) in KNOBS.accelerated,
            "wrappers_installed": b.installed,
            "mlir_switch": _accelerate.has_traceback_knobs(ir),
            "locations": b.location_api,
        }
    return report


def _mlir_installed() -> dict[str, dict[str, Any]]:
    """Every MLIR bindings installed on sys.path, found by structure and imported by none
    (a package folder with an `ir` module beside a `_mlir_libs` folder of extension modules,
    callsite.mlir._detect.installed_ir_modules), with its folder and distribution."""
    from .mlir._detect import installed_ir_modules

    report = {}
    for name, folder in installed_ir_modules():
        ir_file = os.path.join(folder, "ir.py")
        if not os.path.isfile(ir_file):
            ir_file = os.path.join(folder, "ir", "__init__.py")
        report[name] = {"folder": folder, "distribution": _distribution_of_file(ir_file, name),
                        "imported": name in sys.modules}
    return report


def _mlir_state(found: dict[str, dict[str, Any]]) -> str:
    """What callsite.mlir does in this process, in one line."""
    from .mlir import _detect
    from .mlir._state import KNOBS

    variable = _switches.BY_INTEGRATION["mlir"].variable
    served = [name for name, b in found.items() if b["accelerated"]]
    if served:
        return f"on: MLIR's traceback switches of {', '.join(served)} build callsite's locations"
    if _detect.waiting() and KNOBS.accelerate_new:
        return "on once MLIR bindings are imported (accelerate())"
    if _detect.waiting():
        return "watching imports of MLIR bindings (auto_locations() scopes)"
    return (f"off ({variable}=1 or callsite.mlir.accelerate() turns MLIR's switches on; "
            "auto_locations() works without it)")


def _mlir_status(module: str) -> str:
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


def _torch_status() -> dict[str, Any]:
    """Whether callsite builds torch.fx's node stack traces here (callsite.torch.status();
    torch is not imported to find out)."""
    from . import torch as callsite_torch

    return callsite_torch.status()


def doctor() -> dict[str, Any]:
    """What this installation of callsite can do here, and why, as a JSON-ready dict:
    the Python and build, the frame walk in use and why (with a refused layout's reason), the
    tracking modes available, native-frame support, each start-up switch (set or not, what it
    does), what callsite.mlir does here, the MLIR bindings callsite.mlir.bindings() finds
    (each with its distribution and version, and whether accelerated), every MLIR bindings
    installed (found by structure, never imported to find out), the other known bindings
    modules, whether callsite.torch builds torch.fx's stack traces, and the caches' sizes.
    ``python -m callsite doctor`` prints the same."""
    from . import native, tracking

    modes: dict[str, str | None] = tracking.available_modes()
    auto = modes.pop("auto")
    from .mlir._detect import KNOWN_IR_MODULES

    found = _mlir_bindings()
    installed = _mlir_installed()
    not_imported = {name: _mlir_status(name) for name in KNOWN_IR_MODULES
                    if name not in found and name not in installed}
    return {
        "callsite": {"version": __version__, "package": os.path.dirname(__file__),
                     "extension": _callsite.__file__},
        "python": {"version": platform.python_version(),
                   "implementation": platform.python_implementation(),
                   "executable": sys.executable, "platform": platform.platform()},
        "build": _callsite._build_info(),
        "backend": _backend(),
        "tracking": {"modes": {m: "available" if why is None else f"unavailable: {why}"
                               for m, why in modes.items()},
                     "auto": auto, "enabled": tracking.status()["enabled"]},
        "native": {"supported": True, "frames_here": len(native.stack())},
        "switches": {s.variable: _switches.describe(s, os.environ) for s in _switches.SWITCHES},
        "mlir": {"status": _mlir_state(found),
                 "bindings": found,
                 "installed": installed,
                 "other_known": not_imported,
                 "hint": 'pip install "callsite[mlir]"'
                 if not found and not installed
                 and set(not_imported.values()) <= {"not installed"} else None},
        "torch": _torch_status(),
        "caches": {"mlir_location_contexts": _callsite.mlir.cache_count(),
                   "native_reification": native.cache_info()},
    }


def format_report(report: dict[str, Any]) -> str:
    """The doctor's dict as aligned text, one section per key."""
    lines: list[str] = []

    def emit(key: str, value: Any, indent: int) -> None:
        if isinstance(value, dict):
            lines.append(" " * indent + f"{key}:")
            for k, v in value.items():
                emit(str(k), v, indent + 2)
        else:
            shown = "-" if value is None else value
            lines.append(" " * indent + f"{key + ':':<24} {shown}")

    for section, content in report.items():
        emit(section, content, 0)
    return "\n".join(lines)
