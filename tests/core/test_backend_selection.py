"""Backend selection at import: the environment, and the refusal path a mismatched build takes."""
import os
import subprocess
import sys

import pytest

import callsite

PROBE = (
    "import warnings, callsite\n"
    "print(callsite.get_backend(), callsite.internal_backend_refusal(), sep='|')\n"
    "try:\n"
    "    callsite.set_backend('internal')\n"
    "except RuntimeError as e:\n"
    "    print('refused:', e)\n"
)


def run(env_extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLSITE_")}
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True,
                          check=True)


has_layout = callsite.layout_name != "none"


@pytest.mark.skipif(not has_layout, reason="this build has no internal layout")
def test_default_is_the_internal_walk():
    out = run({}).stdout.splitlines()
    assert out == ["internal|None"]


@pytest.mark.skipif(not has_layout, reason="this build has no internal layout")
def test_environment_selects_the_public_walk():
    out = run({"CALLSITE_BACKEND": "public"}).stdout.splitlines()
    assert out == ["public|None"]  # still switchable back: nothing refused


@pytest.mark.skipif(not has_layout, reason="this build has no internal layout")
def test_a_refused_layout_falls_back_and_says_so(callsite_testing):
    # CALLSITE_TEST_REFUSE_LAYOUT is read by test builds only (the ones with the test hooks).
    result = run({"CALLSITE_TEST_REFUSE_LAYOUT": "pretend the offsets disagree"})
    assert "BackendWarning: callsite: using the public C API frame walk: pretend the offsets" in (
        result.stderr
    )
    assert result.stdout.splitlines() == [
        "public|pretend the offsets disagree",
        "refused: the internal backend is unavailable: pretend the offsets disagree",
    ]


@pytest.mark.skipif(has_layout, reason="this build has an internal layout")
def test_a_build_without_layout_refuses_internal():
    with pytest.raises(RuntimeError, match="no internal frame layout"):
        callsite.set_backend("internal")
    assert callsite.get_backend() == "public"
