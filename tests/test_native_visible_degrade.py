"""visible=True where this build or interpreter has no visible-frame implementation: one
RuntimeWarning, then frames stay on callsite's shadow stack (and still work)."""
import sys
import warnings

import pytest

import callsite
from callsite import native

pytestmark = pytest.mark.skipif(native.visible_frames_available(),
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
