"""The peer venvs: one isolated venv per real third-party package the tests run against
(requirements/peers/<name>.txt, installed by scripts/peers.sh at <repo>/.venv/peer-<name>, with
callsite built in), and how a test runs code there (no tests here).

Peers are tested in one suite per run, not once per Python version the suite runs on: the
peer's interpreter is its own venv's whichever Python runs pytest. tox.ini runs them in 3.11's
suite and sets CALLSITE_PEER_SUITES=0 in the others, which then skip the peer tests saying so."""
from __future__ import annotations

import os
import subprocess

import pytest

from where import REPO  # noqa: E402

ROOT = str(REPO)

#: peer name -> the package holding its MLIR `ir` module and `dialects/`
PEER_PACKAGES = {
    "wave": "iree.compiler",        # wave-lang 3.9.1 brings iree-base-compiler 3.9
    "flydsl": "flydsl._mlir",       # FlyDSL 0.5.0's own build of the bindings
    "torch-mlir": "torch_mlir",     # torch-mlir's FX importer bindings
    "catalyst": "jaxlib.mlir",      # pennylane-catalyst 0.15.0 brings jaxlib 0.7.1
}


def peer_python(name: str) -> str:
    """The python of peer `name`'s venv, or pytest.skip with the reason it is missing."""
    if not os.path.isfile(os.path.join(ROOT, "requirements", "peers", f"{name}.txt")):
        raise ValueError(f"peer_python: name must be one of requirements/peers/*.txt, got {name!r}")
    if os.environ.get("CALLSITE_PEER_SUITES") == "0":
        pytest.skip(f"peer {name}: the peer tests run in another suite of this run "
                    "(CALLSITE_PEER_SUITES=0)")
    venv = os.path.join(ROOT, ".venv", f"peer-{name}")
    python = os.path.join(venv, "bin", "python")
    failed = venv + ".failed"
    if os.path.isfile(failed):
        with open(failed, encoding="utf-8") as f:
            pytest.skip(f"peer {name} did not install: {f.read().strip()}")
    if not os.path.exists(python):
        pytest.skip(f"peer {name} is not installed (no {python}; run scripts/peers.sh {name})")
    return python


def run(python: str, code: str, *args: str, env: dict | None = None, cwd: str = "/",
        timeout: int = 300) -> subprocess.CompletedProcess:
    """`code` run by `python` in a fresh process (CALLSITE_MLIR unset unless `env` sets it)."""
    full = dict(os.environ)
    full.pop("CALLSITE_MLIR", None)
    full.pop("PYTHONPATH", None)
    full.update(env or {})
    return subprocess.run([python, "-c", code, *args], capture_output=True, text=True,
                          env=full, cwd=cwd, timeout=timeout)
