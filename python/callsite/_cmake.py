"""Where the installed C++ package lives: ``python -m callsite._cmake --cmake-dir``.

Use it as ``cmake -Dcallsite_ROOT="$(python -m callsite._cmake --cmake-dir)"`` (or
``-Dcallsite_DIR=...``) before ``find_package(callsite CONFIG)``, as nanobind's ``--cmake_dir``.
"""
from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def cmake_dir() -> str | None:
    """The directory holding callsiteConfig.cmake, or None (a development tree without it)."""
    d = _ROOT / "cmake"
    return str(d) if (d / "callsiteConfig.cmake").is_file() else None


def include_dir() -> str | None:
    """The directory to put on the include path for ``#include "callsite/api.h"``, or None."""
    d = _ROOT / "include"
    if (d / "callsite" / "api.h").is_file():
        return str(d)
    src = _ROOT.parent.parent / "include"  # development tree: python/callsite/../../include
    return str(src) if (src / "callsite" / "api.h").is_file() else None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    what = {"--cmake-dir": cmake_dir, "--include-dir": include_dir}
    if len(args) != 1 or args[0] not in what:
        print("usage: python -m callsite._cmake --cmake-dir | --include-dir", file=sys.stderr)
        return 2
    path = what[args[0]]()
    if path is None:
        print(f"callsite: {args[0][2:]} not found: this callsite is not an installed wheel "
              f"(build one with `pip install .`)", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
