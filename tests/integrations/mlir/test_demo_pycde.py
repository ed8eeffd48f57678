"""`python -m callsite demo pycde`: the example prints the same op locations with MLIR's own
walk and with CALLSITE_MLIR=1 (where MLIR's walk records frames), each naming its own lines."""
import importlib.util
import io
import os
from pathlib import Path

import pytest

from callsite._cli import demo_dsls

from where import REPO  # noqa: E402

EXAMPLES = REPO / "examples"


def test_pycde_example_same_locations_both_ways():
    if importlib.util.find_spec("pycde") is None:
        pytest.skip("pycde is not installed (scripts/setup.sh --dsls)")
    out = io.StringIO()
    assert demo_dsls.main(out, EXAMPLES) == 0, out.getvalue()
    text = out.getvalue()
    mlir_part, ours_part = text.split("--- CALLSITE_MLIR=1")
    ours = [l for l in ours_part.splitlines() if l.count("loc(")]
    theirs = [l for l in mlir_part.splitlines() if l.count("loc(")]
    assert len(ours) > 5 and all('"counter.py":' in l for l in ours), ours
    assert "locations by callsite" in ours_part and "locations by MLIR" in mlir_part
    if any('"counter.py":' in l for l in theirs):
        assert ours == theirs
