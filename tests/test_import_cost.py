"""``import callsite`` loads the extension and nothing heavy: submodules, re and typing wait for
first use (the import time itself is measured by ``python -m callsite bench``, not asserted)."""
import subprocess
import sys

PROBE = (
    "import sys\n"
    "before = set(sys.modules)\n"
    "import callsite\n"
    "new = set(sys.modules) - before\n"
    "print(' '.join(sorted(new)))\n"
)


def newly_imported(extra=""):
    out = subprocess.run([sys.executable, "-c", PROBE + extra], capture_output=True, text=True,
                         check=True)
    return out.stdout.split("\n")


def test_import_loads_no_submodule_and_nothing_heavy():
    new = set(newly_imported()[0].split())
    assert "callsite._callsite" in new
    for heavy in ("re", "typing", "callsite.mlir", "callsite.tracking", "callsite.native",
                  "callsite._doctor", "inspect", "contextlib", "threading"):
        assert heavy not in new, f"import callsite imported {heavy}"


def test_submodules_load_on_first_use():
    out = newly_imported("import callsite as c\n"
                         "print(c.tracking.__name__, c.native.__name__, 'callsite.mlir' in sys.modules)\n")
    assert out[1] == "callsite.tracking callsite.native False"


def test_unknown_attribute_is_an_attribute_error():
    import callsite
    import pytest

    with pytest.raises(AttributeError, match="module 'callsite' has no attribute 'nope'"):
        callsite.nope  # noqa: B018
    assert {"mlir", "tracking", "native", "doctor"} <= set(dir(callsite))
