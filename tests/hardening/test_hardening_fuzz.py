"""Hypothesis fuzzing of every public callable, each target in its own process.

The case budget per target is CALLSITE_FUZZ_EXAMPLES (default 150; e.g. 5000 for a long run).
A coverage-guided target for pattern handling and location text is in fuzz_patterns.py
(atheris; CALLSITE_ATHERIS_RUNS iterations, default 3000).
"""
from __future__ import annotations

import os
import sys

import pytest

from hardening_support import assert_clean, describe, run_python

from where import SUPPORT  # noqa: E402

HERE = str(SUPPORT)  # the fuzzers
EXAMPLES = int(os.environ.get("CALLSITE_FUZZ_EXAMPLES", "150"))
ATHERIS_RUNS = int(os.environ.get("CALLSITE_ATHERIS_RUNS", "3000"))

try:
    import hypothesis  # noqa: F401
    _NO_HYPOTHESIS = None
except ImportError as e:
    _NO_HYPOTHESIS = f"hypothesis is not installed ({e}); scripts/setup.sh installs it"

TARGETS = ["filter_construction", "filter_methods", "capture_and_render", "native_frames",
           "tracking_calls", "mlir_and_misc"]


@pytest.mark.skipif(_NO_HYPOTHESIS is not None, reason=str(_NO_HYPOTHESIS))
@pytest.mark.parametrize("target", TARGETS)
def test_fuzz_public_callables(target):
    proc = run_python(f"""
        import sys, runpy
        sys.path.insert(0, {HERE!r})
        sys.argv = ["fuzz_callables.py", {target!r}, "{EXAMPLES}"]
        runpy.run_path({os.path.join(HERE, "fuzz_callables.py")!r}, run_name="__main__")
    """, timeout=1800)
    assert_clean(proc)
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith(f"{target} examples="), describe(proc)
    ran = int(last.split("=")[1])
    assert ran >= min(EXAMPLES, 20), describe(proc)
    print(last)


def test_atheris_pattern_and_location_text():
    try:
        import atheris  # noqa: F401
    except ImportError as e:
        pytest.skip(f"atheris is not installed ({e}); scripts/setup.sh tries to install it")
    proc = run_python(f"""
        import sys, runpy
        sys.argv = ["fuzz_patterns.py", "-runs={ATHERIS_RUNS}", "-seed=1"]
        runpy.run_path({os.path.join(HERE, "fuzz_patterns.py")!r}, run_name="__main__")
    """, timeout=1800)
    # libFuzzer exits 0 after -runs iterations; a crash or an unexpected exception is non-zero.
    assert proc.returncode == 0, describe(proc)
    assert "Done" in proc.stderr, describe(proc)
    print([l for l in proc.stderr.splitlines() if l.startswith("Done") or "cov:" in l][-1:])
