"""``callsite.doctor()`` / ``python -m callsite doctor``: what this installation can do, and why."""
from __future__ import annotations

import os
import platform
import sys
from typing import Any

from .. import _callsite, _switches
from .._version import __version__


def _package_dir() -> str:
    """The folder of the callsite package (this module is in its _cli subfolder)."""
    return os.path.dirname(os.path.dirname(__file__))


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


def _torch_status() -> dict[str, Any]:
    """Whether callsite builds torch.fx's node stack traces here (callsite.torch.status();
    torch is not imported to find out)."""
    from .. import torch as callsite_torch

    return callsite_torch.status()


def doctor() -> dict[str, Any]:
    """What this installation of callsite can do here, and why, as a JSON-ready dict:
    the Python and build, the frame walk in use and why (with a refused layout's reason), the
    tracking modes available, native-frame support, each start-up switch (set or not, what it
    does), what callsite.mlir does here, the MLIR bindings callsite.mlir.bindings() finds
    (each with its distribution and version, and whether accelerated), every MLIR bindings
    installed (found by structure, never imported to find out), the other known bindings
    modules, whether callsite.torch builds torch.fx's stack traces, and the caches' sizes.
    ``python -m callsite doctor`` prints the same.

    Example:
        ::

            import callsite

            report = callsite.doctor()
            print(report["backend"]["in_use"], sorted(report))
    """
    from .. import mlir, native, tracking

    modes: dict[str, str | None] = tracking.available_modes()
    auto = modes.pop("auto")
    return {
        "callsite": {"version": __version__, "package": _package_dir(),
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
        "mlir": mlir.status(),
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
