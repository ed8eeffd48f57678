"""Shared helpers of the hardening tests: each case that could crash runs in its own process."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

# What a child process inherits: the sanitized run's preload/options and its PYTHONPATH too.
_ENV_KEEP = ("PATH", "PYTHONPATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "LD_PRELOAD",
             "ASAN_OPTIONS", "UBSAN_OPTIONS", "PYTHONMALLOC", "CALLSITE_BACKEND",
             "CALLSITE_SANITIZED")


def run_python(code: str, *, timeout: float = 120, env: dict | None = None,
               args: tuple = ()) -> subprocess.CompletedProcess:
    """Runs `code` (dedented) in a fresh interpreter (this one), outside the source tree."""
    base = {k: v for k, v in os.environ.items() if k in _ENV_KEEP}
    base["PYTHONFAULTHANDLER"] = "1"  # a crash prints where it happened
    base.update(env or {})
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=timeout, env=base, cwd="/")


def describe(proc: subprocess.CompletedProcess) -> str:
    return (f"exit code {proc.returncode}\n--- stdout\n{proc.stdout[-3000:]}"
            f"\n--- stderr\n{proc.stderr[-3000:]}")


def assert_clean(proc: subprocess.CompletedProcess, expect_stdout: str | None = None) -> None:
    """Exit code 0, no sanitizer or fatal report, and (when given) exactly this stdout."""
    assert proc.returncode == 0, describe(proc)
    for marker in ("Fatal Python error", "terminate called", "runtime error:",
                   "AddressSanitizer", "Segmentation fault"):
        assert marker not in proc.stderr, describe(proc)
    if expect_stdout is not None:
        assert proc.stdout == expect_stdout, describe(proc)


def long_mode() -> bool:
    """CALLSITE_LONG_TESTS=1: the long variants of the stress and memory tests."""
    return os.environ.get("CALLSITE_LONG_TESTS", "0") not in ("", "0")
