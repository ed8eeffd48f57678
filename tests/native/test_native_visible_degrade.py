"""visible=True where this build or interpreter has no visible-frame implementation: one
RuntimeWarning, then frames stay on callsite's shadow stack (and still work)."""
import sys
import warnings

import pytest

import callsite
from callsite import native

@pytest.mark.skipif(native.visible_frames_available(),
                    reason="visible frames are available here")
def test_visible_degrades_to_shadow_only_with_a_warning():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        exe = native.Executable("kernel", kind="dsl", visible=True,
                                locations=[native.Location("prog.dsl", 3)])

        def callback():
            return sys._getframe(1).f_code.co_name, [f.name for f in callsite.capture()][:2]

        caller, names = native.frame(exe, 0)(callback)()
    assert caller == "test_visible_degrades_to_shadow_only_with_a_warning"
    assert names == ["callback", "kernel"]
    assert any(issubclass(w.category, RuntimeWarning) and "visible" in str(w.message)
               for w in caught)
    assert native.visible_frames_refusal()


PROBE = """
import sys, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import callsite
    from callsite import native
    exe = native.Executable("kernel", kind="dsl", visible=True,
                            locations=[native.Location("prog.dsl", 3)])
def callback():
    return sys._getframe(1).f_code.co_name, [f.name for f in callsite.capture()][:3]
back, names = native.frame(exe, 0)(callback)()
assert back == "<module>", back
assert names == ["callback", "kernel", "<module>"], names
assert any("visible native frames are not available" in str(w.message) for w in caught), \\
    [str(w.message) for w in caught]
print(native.visible_frames_refusal())
"""


def test_refused_layout_degrades_visible_frames_to_shadow_only():
    """A refused internal layout (driven here through the test builds' switch, as a mismatched
    interpreter would refuse it) refuses visible frames too: a warning, shadow-only frames that
    still show in captures, no crash — on every version, including those with an
    implementation."""
    import os
    import subprocess

    try:
        from callsite import _callsite_testing  # noqa: F401  (the switch exists in test builds)
    except ImportError:
        pytest.skip("needs a test build (CALLSITE_TESTING=ON)")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CALLSITE_")}
    env["CALLSITE_TEST_REFUSE_LAYOUT"] = "pretend the offsets disagree"
    result = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "pretend the offsets disagree" in result.stdout
