"""``python -m callsite demo [SECTION ...]``: callsite's demos (every section by default).

A section is a function taking the output stream; add one to SECTIONS. The DSL example is
installed as data next to the package (<prefix>/share/callsite/examples/dsl), not as a module of
it; in a checkout it is examples/dsl.
"""
from __future__ import annotations

import importlib
import importlib.util
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Callable, TextIO

#: With callsite installed, pip installs the extra's dependencies (iree-base-compiler) only.
MLIR_HINT = 'pip install "callsite[mlir]"'
#: Top-level packages of MLIR's Python bindings the DSL example can run on.
MLIR_PROVIDERS = ("iree.compiler", "mlir")


#: Where a wheel installs the examples, under its data scheme (sys.prefix in a venv): outside
#: the package, so type checkers and stubtest never take example code for the package's own.
INSTALLED_EXAMPLES = ("share", "callsite", "examples")


def _installed_examples() -> Path | None:
    """The examples this installation of callsite put in its data directory, if any."""
    from importlib import metadata

    try:
        files = metadata.distribution("callsite").files or []
    except metadata.PackageNotFoundError:
        return None
    suffix = "/".join((*INSTALLED_EXAMPLES, "dsl", "demo.py"))
    for f in files:
        if f.as_posix().endswith(suffix):
            return Path(str(f.locate())).resolve().parents[1]
    return None


def examples_dir() -> Path:
    """The examples: $CALLSITE_EXAMPLES, else the checkout holding the package (a development
    build), else those the wheel installed (<prefix>/share/callsite/examples)."""
    package = Path(__file__).resolve().parents[1]  # this module is callsite/_cli/demo.py
    candidates = [os.environ.get("CALLSITE_EXAMPLES"), package.parent.parent / "examples"]
    for c in candidates:
        if c and (Path(c) / "dsl" / "demo.py").is_file():
            return Path(c)
    installed = _installed_examples()
    if installed is not None and (installed / "dsl" / "demo.py").is_file():
        return installed
    raise FileNotFoundError("callsite demo: the DSL example is neither installed with callsite "
                            f"({Path(sys.prefix, *INSTALLED_EXAMPLES)}) nor in a checkout; "
                            "reinstall callsite, or set "
                            "CALLSITE_EXAMPLES=/path/to/callsite/examples")


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


def _skip_without_mlir(out: TextIO, what: str) -> bool:
    """True (and says why) when no MLIR bindings the examples can use are installed."""
    if mlir_available():
        return False
    print(f"skipped: {what} builds MLIR through MLIR's Python bindings, and none are "
          f"installed here.\n  {MLIR_HINT}  (installs iree-base-compiler) and run it again.",
          file=out)
    return True


def _iree_available() -> bool:
    try:
        return importlib.util.find_spec("iree.compiler") is not None
    except ImportError:  # no iree package at all
        return False


def switch_section(out: TextIO) -> int:
    """MLIR's own traceback switch and CALLSITE_MLIR=1 on the same program, side by side."""
    if not _iree_available():
        print("skipped: this demo runs on iree's MLIR bindings (iree.compiler), which are not "
              f"installed here.\n  {MLIR_HINT}  (installs iree-base-compiler) and run it again.",
              file=out)
        return 0
    from . import demo_switch

    return demo_switch.main(out, examples_dir())


def dsl_section(out: TextIO) -> int:
    """The DSL demo: real MLIR with source locations (examples/dsl)."""
    if _skip_without_mlir(out, "the DSL demo"):
        return 0
    load_example("dsl")
    demo = importlib.import_module("callsite_examples_dsl.demo")
    status: int = demo.main(out)
    return status


def native_section(out: TextIO) -> int:
    """Native frames: a C++ interpreter's frames between the Python frames (examples/interp)."""
    from . import demo_native

    demo_native.main(out)
    return 0


def pycde_section(out: TextIO) -> int:
    """MLIR's own switch served by callsite: a pycde design with and without CALLSITE_MLIR=1."""
    from . import demo_dsls

    return demo_dsls.main(out, examples_dir())


SECTIONS: dict[str, Callable[[TextIO], int]] = {
    "switch": switch_section, "dsl": dsl_section, "native": native_section,
    "pycde": pycde_section}


def run(sections: list[str], out: TextIO) -> int:
    """Runs the named sections (every one when empty); the exit status."""
    status = 0
    for name in sections or list(SECTIONS):
        doc = SECTIONS[name].__doc__ or name
        print(f"\n##### callsite demo: {name} — {doc.splitlines()[0]}\n", file=out)
        status |= SECTIONS[name](out) or 0
    return status
