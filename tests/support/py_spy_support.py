"""py-spy (an out-of-process sampler) run on a child process of a test."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading

import pytest


def py_spy_path() -> str:
    """py-spy's executable (the test venv's, or on PATH); skips the test without it."""
    path = shutil.which("py-spy") or os.path.join(os.path.dirname(sys.executable), "py-spy")
    if not os.path.exists(path):
        pytest.skip("py-spy is not installed")
    return path


def wait_for(path, timeout=10.0, child=None):
    """Waits until the file `path` exists (a child's sign that it is where it should be)."""
    for _ in range(int(timeout / 0.05)):
        if path.exists() or (child is not None and child.poll() is not None):
            break
        threading.Event().wait(0.05)
    if not path.exists():
        raise AssertionError(f"the child never wrote {path}")


def dump(child: subprocess.Popen, *args: str) -> subprocess.CompletedProcess:
    """`py-spy dump ARGS --pid CHILD`, then the child is killed; skips the test when py-spy
    cannot attach (no ptrace permission here)."""
    try:
        result = subprocess.run([py_spy_path(), "dump", *args, "--pid", str(child.pid)],
                                capture_output=True, text=True, timeout=60)
    finally:
        child.kill()
        child.wait()
    if result.returncode != 0:
        pytest.skip(f"py-spy cannot attach here: {result.stderr.strip()[:300]}")
    return result
