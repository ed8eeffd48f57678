"""callsite.doctor() reports exactly the bindings callsite.mlir.bindings() finds, with the
distribution and version of each and whether callsite serves its switches — with each
bindings imported, each in its own process (the installed iree, and every real peer's venv)."""
from __future__ import annotations

import json
import sys

import pytest

from peers import PEER_PACKAGES, peer_python, run

PROBE = r'''
import importlib, importlib.metadata, json, os, sys
package, accelerate = sys.argv[1], sys.argv[2] == "1"
importlib.import_module(package + ".ir")
import callsite, callsite.mlir
if accelerate:
    callsite.mlir.accelerate()
report = callsite.doctor()["mlir"]
found = [b.ir.__name__ for b in callsite.mlir.bindings()]
print(json.dumps({"report": report, "found": found,
                  "switch": os.environ.get("CALLSITE_MLIR")}))
'''

EXPECTED_DISTRIBUTION = {  # package -> distribution whose file is the ir module
    "iree.compiler": "iree-base-compiler",
    "flydsl._mlir": "flydsl",
    "torch_mlir": "torch-mlir",
    "jaxlib.mlir": "jaxlib",
}


def _check(python: str, package: str, *, has_switch: bool, c_api: bool | None = None) -> None:
    version = run(python, "import importlib.metadata as m, sys; print(m.version(sys.argv[1]))",
                  EXPECTED_DISTRIBUTION[package])
    assert version.returncode == 0, version.stderr
    distribution = f"{EXPECTED_DISTRIBUTION[package]} {version.stdout.strip()}"
    for mode, env in (("0", {}), ("1", {}), ("0", {"CALLSITE_MLIR": "1"})):
        out = run(python, PROBE, package, mode, env=env)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout.strip().splitlines()[-1])
        bindings = data["report"]["bindings"]
        assert list(bindings) == data["found"] == [package + ".ir"]
        entry = bindings[package + ".ir"]
        assert entry["distribution"] == distribution
        assert entry["mlir_switch"] is has_switch
        accelerated = has_switch and (mode == "1" or "CALLSITE_MLIR" in env)
        assert entry["accelerated"] is accelerated, (mode, env, entry)
        assert entry["wrappers_installed"] is accelerated
        if c_api is not None:  # (a peer's venv runs the callsite installed there)
            assert entry["locations"].startswith("MLIR C API (" if c_api else "Python API (")
        assert data["report"]["hint"] is None
        assert package + ".ir" not in data["report"]["other_known"]


def test_doctor_with_the_installed_iree():
    probe = run(sys.executable, "import iree.compiler.ir")
    if probe.returncode:
        pytest.skip("iree-base-compiler is not installed")
    _check(sys.executable, "iree.compiler", has_switch=True, c_api=True)


@pytest.mark.parametrize("peer,has_switch", [("wave", True), ("flydsl", True),
                                             ("torch-mlir", True), ("catalyst", False)])
def test_doctor_with_each_peer(peer, has_switch):
    _check(peer_python(peer), PEER_PACKAGES[peer], has_switch=has_switch)


def test_doctor_without_bindings_lists_none_and_imports_none():
    out = run(sys.executable, "import callsite, json, sys; r = callsite.doctor()['mlir'];"
              "print(json.dumps([r['bindings'], sorted(m for m in sys.modules if m.endswith('.ir'))]))")
    assert out.returncode == 0, out.stderr
    bindings, imported = json.loads(out.stdout)
    assert bindings == {} and imported == []


def test_status_is_the_doctor_s_mlir_section():
    """callsite.mlir.status() is what the doctor reports under "mlir" (as callsite.torch.status()
    is its torch section), with bindings imported and before any are."""
    probe = run(sys.executable, "import iree.compiler.ir")
    if probe.returncode:
        pytest.skip("iree-base-compiler is not installed")
    out = run(sys.executable,
              "import callsite, callsite.mlir, json; before = callsite.mlir.status();"
              "import iree.compiler.ir; callsite.mlir.use('iree.compiler.ir');"
              "print(json.dumps([before, callsite.mlir.status(), callsite.doctor()['mlir']]))")
    assert out.returncode == 0, out.stderr
    before, status, section = json.loads(out.stdout.strip().splitlines()[-1])
    assert before["bindings"] == {} and "iree.compiler.ir" not in before["other_known"]
    assert status == section
    assert list(status["bindings"]) == ["iree.compiler.ir"]
    assert status["bindings"]["iree.compiler.ir"]["locations"].startswith("MLIR C API (")
