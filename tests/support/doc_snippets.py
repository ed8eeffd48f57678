"""The documents' Python snippets, shared by tests/docs/test_docs_snippets.py (the site's pages)
and test_readme.py (the README): how a block is found, which optional packages it may import,
and how it runs as written (in a fresh interpreter, outside the checkout)."""
from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys

import pytest

#: A ```python block, after an optional line ``<!-- not run: why -->`` (a block that cannot run
#: on its own: a fragment of a longer program, or one that needs a GPU).
BLOCK = re.compile(r"^(?:<!-- not run: (?P<why>.*?) -->\n)?```python\n(?P<code>.*?)^```", re.S | re.M)
#: Optional packages a snippet may import: the snippet skips where one is missing.
OPTIONAL = {"iree": 'pip install "callsite[mlir]"', "mlir": "MLIR's bindings", "jaxlib": "jaxlib",
            "torch": "torch", "pycde": "pycde", "cutlass": "nvidia-cutlass-dsl"}


def python_blocks(text: str) -> list[tuple[str, str | None]]:
    """Every ```python block of a Markdown text, in order, as (code, why not run or None)."""
    return [(m.group("code"), m.group("why")) for m in BLOCK.finditer(text)]


def skip_unless_importable(code: str) -> None:
    """Skips the test when the snippet imports an optional package that is not installed here."""
    for module in sorted(set(re.findall(r"^\s*(?:from|import)\s+(\w+)", code, flags=re.M))):
        if module in OPTIONAL and importlib.util.find_spec(module) is None:
            pytest.skip(f"the snippet needs {module} ({OPTIONAL[module]})")


def run_as_written(code: str, tmp_path: pathlib.Path) -> None:
    """Runs the snippet as a script in `tmp_path` with the installed callsite (no PYTHONPATH, no
    CALLSITE_BACKEND) and checks that it exits cleanly and printed no traceback."""
    script = tmp_path / "snippet.py"
    script.write_text(code, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CALLSITE_BACKEND")}
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, env=env, timeout=300)
    assert run.returncode == 0, f"stdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert "Traceback (most recent call last)" not in run.stderr
