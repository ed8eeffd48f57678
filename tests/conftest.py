"""tests/conftest.py — shared pytest set-up: import-path guard, report header, backend and
test-hook fixtures."""
from __future__ import annotations

import contextlib
import os
import sys

import pytest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The helpers every area's tests import by name (mlir_support, peers, where...).
_SUPPORT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "support")
if _SUPPORT not in sys.path:
    sys.path.insert(0, _SUPPORT)
_SOURCE_PKG = os.path.join(_REPO, "python", "callsite")


def pytest_report_header(config):
    try:
        import callsite
    except Exception as e:  # the tests that import it will fail loudly
        return [f"callsite: NOT IMPORTABLE ({type(e).__name__}: {e})"]
    refusal = getattr(callsite, "internal_backend_refusal", lambda: "?")()
    return [
        f"callsite: {os.path.dirname(callsite.__file__)}",
        f"callsite: backend={callsite.get_backend()} layout={getattr(callsite, 'layout_name', '?')}"
        f" internal-refusal={refusal!r} CALLSITE_BACKEND={os.environ.get('CALLSITE_BACKEND')!r}",
    ]


def pytest_configure(config):
    # The suite tests the installed package; importing python/callsite (no extension module in it)
    # would test nothing real. Dev builds (build/<dir>/pkg) are fine.
    try:
        import callsite
    except Exception:
        return
    here = os.path.dirname(os.path.abspath(callsite.__file__))
    if os.path.realpath(here) == os.path.realpath(_SOURCE_PKG) and not hasattr(callsite, "_callsite"):
        raise pytest.UsageError(f"callsite imported from the source tree {here}; install it "
                                "(scripts/setup.sh) or use a dev build's pkg/ directory")
    if "site-packages" not in here.split(os.sep):
        # A development build has no start-up hook in site-packages: the child processes the
        # tests start run this checkout's (python/startup), as an installed one would.
        startup = os.path.join(_SUPPORT, "checkout_startup")
        paths = os.environ.get("PYTHONPATH", "").split(os.pathsep)
        if startup not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([startup] + [p for p in paths if p])


@contextlib.contextmanager
def using_backend(name: str):
    """Switches callsite to backend `name` for the block (skips the test if it is unavailable)."""
    import callsite

    previous = callsite.get_backend()
    try:
        callsite.set_backend(name)
    except RuntimeError as e:
        pytest.skip(f"callsite backend {name!r} unavailable in this build: {e}")
    try:
        yield name
    finally:
        callsite.set_backend(previous)


@pytest.fixture(params=["internal", "public"])
def callsite_backend(request):
    """Runs the test once per capture backend."""
    with using_backend(request.param) as name:
        yield name


@pytest.fixture(scope="session")
def callsite_testing():
    """callsite._callsite_testing: the test hooks, built only in test builds
    (CALLSITE_TESTING=ON, as scripts/setup.sh does); the test is skipped without them."""
    return pytest.importorskip("callsite._callsite_testing",
                               reason="a build without CALLSITE_TESTING=ON has no test hooks")


@pytest.fixture
def no_tracer():
    """Line numbers of traced frames differ from the line table: refuse to run under a tracer."""
    if sys.gettrace() is not None or sys.getprofile() is not None:
        pytest.skip("a trace/profile function is active (coverage, debugger): frame line "
                    "numbers would not match the line table")
