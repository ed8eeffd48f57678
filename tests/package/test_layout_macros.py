"""Every shared layout file (src/layouts/*.inc.h) names each macro it needs when a layout file
includes it without defining it: the preprocessor stops with that name rather than with an
error deep in the expanded walker."""
from __future__ import annotations

import shutil
import subprocess
import sysconfig

import pytest

from where import REPO

#: file -> the macros its header comment lists as required.
REQUIRED = {
    "walker.inc.h": ["CALLSITE_FRAME_T", "CALLSITE_FIRST_FRAME", "CALLSITE_PREVIOUS",
                     "CALLSITE_INSPECT", "CALLSITE_WALK_NAME"],
    "interpreter_frame.inc.h": ["CALLSITE_EXECUTABLE", "CALLSITE_HIDDEN_OWNER",
                                "CALLSITE_WALK_NAME"],
    "cframe_frame.inc.h": ["CALLSITE_HIDDEN_OWNER", "CALLSITE_OWNER_TEST_FIRST",
                           "CALLSITE_WALK_NAME"],
    "layout_tail.inc.h": ["CALLSITE_LAYOUT_NAME", "CALLSITE_WALK_NAME"],
    "visible_frame.inc.h": ["CALLSITE_VF_CURRENT", "CALLSITE_VF_IP_FIELD", "CALLSITE_VF_NAME",
                            "CALLSITE_VF_CODE_FIELD"],
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_a_missing_macro_is_named(tmp_path, name):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler")
    source = tmp_path / "layout.c"
    source.write_text(f'#include <Python.h>\n#include "layouts/{name}"\n')
    result = subprocess.run(
        [compiler, "-E", "-I", str(REPO / "src"), "-I", sysconfig.get_paths()["include"],
         str(source)], capture_output=True, text=True)
    assert result.returncode != 0
    for macro in REQUIRED[name]:
        assert f"layouts/{name} needs {macro} defined" in result.stderr, (macro, result.stderr)
