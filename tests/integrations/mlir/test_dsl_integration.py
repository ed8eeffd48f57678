"""Real DSLs from PyPI, each in its own process (pycde and iree cannot share one): every op's
location with callsite.mlir.accelerate() equals what the bindings' own loc_tracebacks() gives
under the same rules (where it records frames), every user op names a user line, and no
code-object reference is left behind. Skipped with the reason when a package is not installed
(scripts/setup.sh --dsls installs them)."""
from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys

import pytest

from where import TESTS  # noqa: E402

HERE = os.path.join(str(TESTS), "dsl")
# design module -> (top-level package it needs, pip name)
DESIGNS = {
    "pycde_design": ("pycde", "pycde"),
    "cute_design": ("cutlass", "nvidia-cutlass-dsl"),
    "jaxlib_design": ("jaxlib", "jaxlib"),
    "iree_design": ("iree.compiler", "iree-base-compiler"),
}


def _available(package: str) -> bool:
    try:
        return importlib.util.find_spec(package) is not None
    except ModuleNotFoundError:
        return False


def run_design(design: str) -> dict:
    package, pip_name = DESIGNS[design]
    if not _available(package):
        pytest.skip(f"{pip_name} is not installed for Python {sys.version.split()[0]} "
                    "(scripts/setup.sh --dsls)")
    env = dict(os.environ)
    env.pop("CALLSITE_MLIR", None)
    done = subprocess.run([sys.executable, os.path.join(HERE, "compare_locations.py"), design],
                          capture_output=True, text=True, env=env, cwd=HERE, timeout=180)
    if done.returncode != 0 and "ModuleNotFoundError" in done.stderr:
        pytest.skip(f"{pip_name} does not import: {done.stderr.strip().splitlines()[-1][:200]}")
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    if "skip" in report:
        pytest.skip(report["skip"])
    return report


@pytest.mark.parametrize("design", list(DESIGNS))
def test_locations_equal_the_bindings_own(design):
    report = run_design(design)
    assert report["ops"] > 0 and report["user_ops"] > 0, report
    if report["mlir_records_frames"]:
        assert report["identical"] == report["ops"], report["different"]
    else:  # stable-ABI wheel: MLIR's own gives loc(unknown) everywhere; callsite does not
        assert report["unknown"] == report["ops"] - report["user_ops"], report
    assert report["without_user_line"] == [], report
    assert report["code_ref_delta"] == {}, report
