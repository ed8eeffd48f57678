"""`python -m callsite demo [SECTION ...]`: runs callsite's demos (every section by default).

A section is a function taking the output stream; add one to SECTIONS. The demos live in the
source tree's examples/ directory (see examples_dir()).
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from pathlib import Path


def examples_dir() -> Path:
    """examples/ of the callsite checkout: $CALLSITE_EXAMPLES, else next to the package (an
    installed copy or a development build linking to the sources), else the checkout that
    holds the virtual environment (scripts/setup.sh puts it in .venv/py3.X)."""
    here = Path(__file__).resolve().parent
    prefix = Path(sys.prefix).resolve()
    candidates = [os.environ.get("CALLSITE_EXAMPLES"), here / "examples"]
    candidates += [p / "examples" for p in (here.parents[1:2] + prefix.parents[1:2])]
    for c in candidates:
        if c and (Path(c) / "dsl" / "demo.py").is_file():
            return Path(c)
    raise SystemExit("callsite demo: examples/ not found; run it from a callsite checkout "
                     "(scripts/demo.sh) or set CALLSITE_EXAMPLES=/path/to/callsite/examples")


def load_example(name: str):
    """examples/<name>/ imported as the package `callsite_examples_<name>`."""
    path = examples_dir() / name
    package = f"callsite_examples_{name}"
    if package in sys.modules:
        return sys.modules[package]
    spec = importlib.util.spec_from_file_location(package, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    spec.loader.exec_module(module)
    return module


def dsl_section(out) -> int:
    """The DSL demo: real MLIR with source locations (examples/dsl)."""
    load_example("dsl")
    return importlib.import_module("callsite_examples_dsl.demo").main(out)


def native_section(out) -> int:
    """Native frames: a C++ interpreter's frames between the Python frames (examples/interp)."""
    from . import native  # the interpreter is the callsite.callsite_calc extension

    native._demo(out)
    return 0


def pycde_section(out) -> int:
    """MLIR's own switch served by callsite: a pycde design with and without CALLSITE_MLIR=1."""
    from . import _demo_dsls

    return _demo_dsls.main(out, examples_dir())


SECTIONS = {"dsl": dsl_section, "native": native_section, "pycde": pycde_section}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m callsite")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="run the demos")
    demo.add_argument("sections", nargs="*", metavar="SECTION",
                      help=f"which demos (default: all of {', '.join(SECTIONS)})")
    args = parser.parse_args(argv)
    unknown = [s for s in args.sections if s not in SECTIONS]
    if unknown:
        parser.error(f"unknown section {unknown[0]!r} (choose from {', '.join(SECTIONS)})")
    status = 0
    for name in args.sections or list(SECTIONS):
        print(f"\n##### callsite demo: {name} — {SECTIONS[name].__doc__.splitlines()[0]}\n")
        status |= SECTIONS[name](sys.stdout) or 0
    return status


if __name__ == "__main__":
    sys.exit(main())
