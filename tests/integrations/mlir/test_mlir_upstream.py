"""MLIR's own auto_location.py test (tests/mlir_upstream/), unmodified, passing with
CALLSITE_MLIR=1 against each installed distribution of the bindings and each real peer's
(iree 3.9 from wave-lang, FlyDSL's flydsl._mlir, torch-mlir's, each in its own venv); where
MLIR's own walk records frames, its output is identical to callsite's, test by test."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from peers import PEER_PACKAGES, peer_python

from where import TESTS  # noqa: E402

UPSTREAM = os.path.join(str(TESTS), "mlir_upstream", "test",
                        "python", "ir", "auto_location.py")
# package that holds ir.py and dialects/ -> how MLIR's test imports it
DISTRIBUTIONS = {"iree.compiler": "iree", "jaxlib.mlir": "jaxlib", "mlir": "mlir"}
FILECHECK = shutil.which("filecheck") or os.path.join(os.path.dirname(sys.executable), "filecheck")


_FIND = ("import importlib.util, os, sys\n"
         "try:\n    spec = importlib.util.find_spec(sys.argv[1])\n"
         "except ModuleNotFoundError:\n    spec = None\n"
         "d = spec.submodule_search_locations[0] if spec and spec.submodule_search_locations else ''\n"
         "print(d if d and os.path.exists(os.path.join(d, 'dialects', 'arith.py')) else '')")


def _installed(package: str, python: str = sys.executable) -> str | None:
    """The directory of `package` (with dialects/arith.py) as `python` imports it, or None."""
    found = subprocess.run([python, "-c", _FIND, package], capture_output=True, text=True,
                           cwd="/").stdout.strip()
    return found or None


def _adapted_copy(tmp_path, package: str, package_dir: str) -> str:
    """The test under <tmp>/test/python/ir/ with its imports naming `package`, and the CHECK
    lines' dialect directory naming where the distribution installs it."""
    with open(UPSTREAM, encoding="utf-8") as f:
        text = f.read()
    for line in ("from mlir.ir import *", "from mlir.dialects._ods_common import _cext",
                 "from mlir.dialects import arith, _arith_ops_gen"):
        assert line in text
        text = text.replace(line, line.replace("from mlir.", f"from {package}.", 1), 1)
    parent = os.path.basename(package_dir)  # mlir, compiler...
    text = text.replace("[[SEP]]mlir[[SEP]]dialects[[SEP]]", f"[[SEP]]{parent}[[SEP]]dialects[[SEP]]")
    # A distribution's own dialects/arith.py need not have upstream's length (iree 3.9's has
    # 20 more lines): its two line numbers match any line; columns and all else stay checked,
    # and MLIR's own output (compared below where it walks) is the exact oracle.
    text = text.replace('arith.py":45:12', 'arith.py":{{[0-9]+}}:12')
    text = text.replace('arith.py":90:40', 'arith.py":{{[0-9]+}}:40')
    directory = tmp_path / "test" / "python" / "ir"
    directory.mkdir(parents=True)
    path = directory / "auto_location.py"
    path.write_text(text, encoding="utf-8")
    return str(path)


def _run(path: str, callsite_mlir: bool, python: str = sys.executable
         ) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    env.pop("CALLSITE_MLIR", None)
    env.pop("PYTHONPATH", None)
    if callsite_mlir:
        env["CALLSITE_MLIR"] = "1"
    return subprocess.run([python, path], capture_output=True, text=True, env=env,
                          cwd=os.path.dirname(path), timeout=300)


def _sections(output: str) -> dict[str, str]:
    parts = re.split(r"^TEST: (\w+)$", output, flags=re.M)
    return {parts[i]: parts[i + 1] for i in range(1, len(parts) - 1, 2)}


def _check(tmp_path, package: str, python: str) -> None:
    package_dir = _installed(package, python)
    if package_dir is None:
        pytest.skip(f"{package} (with dialects/arith.py) is not installed")
    if not os.path.exists(FILECHECK):
        pytest.skip("the filecheck package is not installed (pip install filecheck)")
    path = _adapted_copy(tmp_path, package, package_dir)

    ours = _run(path, True, python)
    theirs = _run(path, False, python)
    if ours.returncode and theirs.returncode and "TEST:" not in theirs.stdout.replace(
            "TEST: testInferLocations", "", 1):
        last = theirs.stderr.strip().splitlines()[-1:]
        if last and ours.stderr.strip().endswith(last[0]):  # the bindings cannot run the test
            pytest.skip(f"MLIR's own run fails the same way with {package}: {last[0][-160:]}")
    assert ours.returncode == 0, ours.stderr
    assert "callsite" not in ours.stderr, ours.stderr
    check = subprocess.run([FILECHECK, path], input=ours.stdout, capture_output=True, text=True,
                           timeout=60)
    assert check.returncode == 0, f"FileCheck failed:\n{check.stdout}{check.stderr}\n{ours.stdout}"
    assert len(_sections(ours.stdout)) == 7

    # MLIR's own run: where it records frames, every test it completes prints the same text.
    own = _sections(theirs.stdout)
    ours_by_test = _sections(ours.stdout)
    if "callsite(" not in theirs.stdout:
        return  # MLIR's own records no frames here (stable-ABI wheel): FileCheck is the oracle
    complete = list(own)[:-1] if theirs.returncode else list(own)
    assert complete, theirs.stderr
    for name in complete:
        assert own[name] == ours_by_test[name], name


@pytest.mark.skipif(sys.version_info < (3, 11), reason="MLIR's test: REQUIRES python-ge-311")
@pytest.mark.parametrize("package", list(DISTRIBUTIONS))
def test_auto_location_passes_under_callsite_mlir(tmp_path, package):
    _check(tmp_path, package, sys.executable)


@pytest.mark.parametrize("peer", ["wave", "flydsl", "torch-mlir"])
def test_auto_location_passes_under_callsite_mlir_on_peer(tmp_path, peer):
    """Each peer's own bindings (its venv, its process): iree 3.9 predates the two actions,
    which callsite then serves; flydsl._mlir and torch_mlir have them."""
    _check(tmp_path, PEER_PACKAGES[peer], peer_python(peer))
