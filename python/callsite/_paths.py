"""Where the installed C++ package lives, as nanobind's ``cmake_dir()``/``include_dir()``.

From the shell: ``cmake -Dcallsite_ROOT="$(python -m callsite --cmake-dir)"`` before
``find_package(callsite CONFIG)``; ``python -m callsite --include-dir`` for the headers alone.
"""
from __future__ import annotations

from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def cmake_dir() -> str:
    """The directory holding callsiteConfig.cmake (``find_package(callsite CONFIG)``).

    Raises:
        FileNotFoundError: in a development tree, which has no installed CMake package.

    Example:
        ::

            import os
            import callsite

            print(os.path.exists(os.path.join(callsite.cmake_dir(), "callsiteConfig.cmake")))
    """
    d = _ROOT / "cmake"
    if not (d / "callsiteConfig.cmake").is_file():
        raise FileNotFoundError(f"callsite: no CMake package in {_ROOT}: this callsite is not "
                                "installed from a wheel (build one with `pip install .`)")
    return str(d)


def include_dir() -> str:
    """The directory to put on the include path for ``#include "callsite/api.h"``.

    Raises:
        FileNotFoundError: neither the wheel nor a checkout has the headers.

    Example:
        ::

            import os
            import callsite

            print(os.path.exists(os.path.join(callsite.include_dir(), "callsite", "api.h")))
    """
    for d in (_ROOT / "include", _ROOT.parent.parent / "include"):  # wheel, then checkout
        if (d / "callsite" / "api.h").is_file():
            return str(d)
    raise FileNotFoundError(f"callsite: no C++ headers next to {_ROOT} (include/callsite/api.h)")
