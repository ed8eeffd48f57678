"""tests/conftest.py — shared pytest set-up: import-path guard, report header, backend fixture."""
from __future__ import annotations

import contextlib
import os
import sys

import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SOURCE_PKG = os.path.join(_REPO, "python", "locus")


def pytest_report_header(config):
    try:
        import locus
    except Exception as e:  # the tests that import it will fail loudly
        return [f"locus: NOT IMPORTABLE ({type(e).__name__}: {e})"]
    refusal = getattr(locus, "internal_backend_refusal", lambda: "?")()
    return [
        f"locus: {os.path.dirname(locus.__file__)}",
        f"locus: backend={locus.get_backend()} layout={getattr(locus, 'layout_name', '?')}"
        f" internal-refusal={refusal!r} LOCUS_BACKEND={os.environ.get('LOCUS_BACKEND')!r}",
    ]


def pytest_configure(config):
    # The suite tests the installed package; importing python/locus (no extension module in it)
    # would test nothing real. Dev builds (build/<dir>/pkg) are fine.
    try:
        import locus
    except Exception:
        return
    here = os.path.dirname(os.path.abspath(locus.__file__))
    if os.path.realpath(here) == os.path.realpath(_SOURCE_PKG) and not hasattr(locus, "_locus"):
        raise pytest.UsageError(f"locus imported from the source tree {here}; install it "
                                "(scripts/setup.sh) or use a dev build's pkg/ directory")


@contextlib.contextmanager
def using_backend(name: str):
    """Switches locus to backend `name` for the block (skips the test if it is unavailable)."""
    import locus

    previous = locus.get_backend()
    try:
        locus.set_backend(name)
    except RuntimeError as e:
        pytest.skip(f"locus backend {name!r} unavailable in this build: {e}")
    try:
        yield name
    finally:
        locus.set_backend(previous)


@pytest.fixture(params=["internal", "public"])
def locus_backend(request):
    """Runs the test once per capture backend."""
    with using_backend(request.param) as name:
        yield name


@pytest.fixture
def no_tracer():
    """Line numbers of traced frames differ from the line table: refuse to run under a tracer."""
    if sys.gettrace() is not None or sys.getprofile() is not None:
        pytest.skip("a trace/profile function is active (coverage, debugger): frame line "
                    "numbers would not match the line table")
