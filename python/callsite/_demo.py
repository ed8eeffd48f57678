"""``python -m callsite demo [SECTION ...]``: callsite's demos (every section by default).

A section is a function taking the output stream; add one to SECTIONS. The DSL example ships
in the wheel (callsite/_examples/dsl); in a checkout it is examples/dsl.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, TextIO

MLIR_HINT = 'pip install "callsite[mlir]"'
#: Top-level packages of MLIR's Python bindings the DSL example can run on.
MLIR_PROVIDERS = ("iree.compiler", "mlir")


def examples_dir() -> Path:
    """The examples: $CALLSITE_EXAMPLES, else those installed with the package (the wheel ships
    _examples/dsl), else the checkout holding the package or the virtual environment
    (scripts/setup.sh puts it in .venv/py3.X)."""
    here = Path(__file__).resolve().parent
    prefix = Path(sys.prefix).resolve()
    candidates = [os.environ.get("CALLSITE_EXAMPLES"), here / "_examples"]
    candidates += [p / "examples" for p in (*here.parents[1:2], *prefix.parents[1:2])]
    for c in candidates:
        if c and (Path(c) / "dsl" / "demo.py").is_file():
            return Path(c)
    raise FileNotFoundError("callsite demo: the DSL example is neither installed with callsite "
                            f"({here / '_examples'}) nor in a checkout; reinstall callsite, or "
                            "set CALLSITE_EXAMPLES=/path/to/callsite/examples")


def load_example(name: str) -> ModuleType:
    """examples/<name>/ imported as the package ``callsite_examples_<name>``."""
    path = examples_dir() / name
    package = f"callsite_examples_{name}"
    if package in sys.modules:
        return sys.modules[package]
    spec = importlib.util.spec_from_file_location(package, path / "__init__.py",
                                                  submodule_search_locations=[str(path)])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    spec.loader.exec_module(module)
    return module


def mlir_available() -> bool:
    """Whether MLIR's Python bindings the DSL example can use are installed."""
    for name in MLIR_PROVIDERS:
        try:
            if importlib.util.find_spec(name) is not None:
                return True
        except ImportError:  # a parent package that is not there
            continue
    return False


def dsl_section(out: TextIO) -> int:
    """The DSL demo: real MLIR with source locations (examples/dsl)."""
    if not mlir_available():
        print("skipped: the DSL demo builds MLIR through MLIR's Python bindings, and none are "
              f"installed here.\n  {MLIR_HINT}  (installs iree-base-compiler) and run it again.",
              file=out)
        return 0
    load_example("dsl")
    demo = importlib.import_module("callsite_examples_dsl.demo")
    status: int = demo.main(out)
    return status


def native_section(out: TextIO) -> int:
    """Native frames: a C++ interpreter's frames between the Python frames (examples/interp)."""
    from . import native  # the interpreter is compiled into callsite

    native._demo(out)
    return 0


def pycde_section(out: TextIO) -> int:
    """MLIR's own switch served by callsite: a pycde design with and without CALLSITE_MLIR=1."""
    from . import _demo_dsls

    return _demo_dsls.main(out, examples_dir())


SECTIONS: dict[str, Callable[[TextIO], int]] = {
    "dsl": dsl_section, "native": native_section, "pycde": pycde_section}


def run(sections: list[str], out: TextIO) -> int:
    """Runs the named sections (every one when empty); the exit status."""
    status = 0
    for name in sections or list(SECTIONS):
        doc = SECTIONS[name].__doc__ or name
        print(f"\n##### callsite demo: {name} — {doc.splitlines()[0]}\n", file=out)
        status |= SECTIONS[name](out) or 0
    return status
