"""The DSL demo (`python -m callsite demo dsl`): runs, and every op points at the user's kernels."""
import io
import os
import re
import subprocess
import sys

import pytest

from callsite import _demo as cli


@pytest.fixture
def examples():
    try:
        return cli.examples_dir()
    except FileNotFoundError as e:
        pytest.skip(str(e))


def test_demo_maps_every_op_to_the_kernels(examples):
    pytest.importorskip("iree.compiler")
    demo = cli.load_example("dsl")
    out = io.StringIO()
    assert __import__("callsite_examples_dsl.demo").demo.main(out) == 0
    text = out.getvalue()
    kernels = os.path.join(str(examples), "dsl", "kernels.py")
    optimised = text.split("== every op of the optimised module")[1].split("== cost")[0]
    rows = [r for r in optimised.splitlines() if r.startswith("  ")]
    assert len(rows) > 15
    assert all("kernels.py:" in r for r in rows)
    # The helper library and the DSL framework are excluded by rules: nothing points there.
    assert "helpers.py" not in text and "tinydsl.py" not in text and "_ops_gen.py" not in text
    # Inlining kept the call site: axpy's ops inlined into poly name both places.
    col = "11" if sys.version_info >= (3, 11) else "0"  # 3.10 has no columns: MLIR prints :0
    assert re.search(rf"arith\.muli\s+kernels\.py:8:{col} .*\[via kernels\.py:19\]", optimised)
    # The positions are CPython's: the line text shown is the kernel line that built the op.
    with open(kernels) as f:
        lines = f.read().splitlines()
    for r in rows:
        line = int(re.search(r"kernels\.py:(\d+):", r).group(1))
        assert lines[line - 1].strip() in r
    assert demo is sys.modules["callsite_examples_dsl"]


def test_cli(examples):
    pytest.importorskip("iree.compiler")
    r = subprocess.run([sys.executable, "-m", "callsite", "demo", "dsl"], capture_output=True,
                       text=True, env={**os.environ, "CALLSITE_EXAMPLES": str(examples)})
    assert r.returncode == 0, r.stderr
    assert "##### callsite demo: dsl" in r.stdout and "loc(callsite(" not in r.stderr
    bad = subprocess.run([sys.executable, "-m", "callsite", "demo", "nope"], capture_output=True,
                         text=True)
    assert bad.returncode == 2 and "unknown demo section 'nope'" in bad.stderr
