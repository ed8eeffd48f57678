"""The real third-party MLIR bindings the tests run against, each in its own venv (no tests
here): which interpreter has which bindings package.

A peer venv is `<repo>/.venv/peer-<name>` (requirements/peers/<name>.txt); tests/peers.py's
peer_python() is used when present, else the venv is looked up here. A missing peer skips the
test with the reason."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: peer name -> the package holding its `ir` module and `dialects/`
PEER_PACKAGES = {
    "wave": "iree.compiler",        # wave-lang 3.9.1 brings iree-base-compiler 3.9
    "flydsl": "flydsl._mlir",       # FlyDSL 0.5.0's own build of the bindings
    "torch-mlir": "torch_mlir",     # torch-mlir's FX importer bindings
    "catalyst": "jaxlib.mlir",      # pennylane-catalyst 0.15.0 brings jaxlib 0.7.1
}


def peer_python(name: str) -> str:
    """The python of peer `name`'s venv with callsite installed, or pytest.skip."""
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import peers  # tests/peers.py (the scripts' installer records why a peer is missing)
    except ImportError:
        peers = None
    finally:
        sys.path.pop(0)
    if peers is not None:
        return peers.peer_python(name)
    python = os.path.join(ROOT, ".venv", f"peer-{name}", "bin", "python")
    if not os.path.exists(python):
        pytest.skip(f"peer {name} is not installed (no {python}; requirements/peers/{name}.txt)")
    probe = subprocess.run([python, "-c", "import callsite"], capture_output=True, text=True,
                           cwd="/")
    if probe.returncode:
        pytest.skip(f"callsite is not installed in the {name} venv: {probe.stderr[-200:]}")
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
