"""Where the installed C++ package lives: ``python -m locus._cmake --cmake-dir``.

Use it as ``cmake -Dlocus_ROOT="$(python -m locus._cmake --cmake-dir)"`` (or
``-Dlocus_DIR=...``) before ``find_package(locus CONFIG)``, as nanobind's ``--cmake_dir``.
"""
from __future__ import annotations

import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parent


def cmake_dir() -> str | None:
    """The directory holding locusConfig.cmake, or None (a development tree without it)."""
    d = _ROOT / "cmake"
    return str(d) if (d / "locusConfig.cmake").is_file() else None


def include_dir() -> str | None:
    """The directory to put on the include path for ``#include "locus/api.h"``, or None."""
    d = _ROOT / "include"
    if (d / "locus" / "api.h").is_file():
        return str(d)
    src = _ROOT.parent.parent / "include"  # development tree: python/locus/../../include
    return str(src) if (src / "locus" / "api.h").is_file() else None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    what = {"--cmake-dir": cmake_dir, "--include-dir": include_dir}
    if len(args) != 1 or args[0] not in what:
        print("usage: python -m locus._cmake --cmake-dir | --include-dir", file=sys.stderr)
        return 2
    path = what[args[0]]()
    if path is None:
        print(f"locus: {args[0][2:]} not found: this locus is not an installed wheel "
              f"(build one with `pip install .`)", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
