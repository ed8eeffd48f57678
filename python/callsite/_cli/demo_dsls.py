"""The switch on a real DSL, for `python -m callsite demo`: examples/pycde/counter.py run
twice, with MLIR's own traceback walk and with CALLSITE_MLIR=1, nothing else changed."""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import TextIO


def main(out: TextIO, examples: Path) -> int:
    """Runs the example both ways (each in its own process); 0 also when pycde is missing."""
    program = Path(examples) / "pycde" / "counter.py"
    if importlib.util.find_spec("pycde") is None:
        print("pycde is not installed for this Python (pip install pycde); skipped.", file=out)
        return 0
    if not program.is_file():
        print(f"{program} not found; skipped.", file=out)
        return 0
    status = 0
    for value, title in (("0", "MLIR's own loc_tracebacks()"), ("1", "CALLSITE_MLIR=1")):
        env = {**os.environ, "CALLSITE_MLIR": value}
        done = subprocess.run([sys.executable, str(program)], capture_output=True, text=True,
                              env=env, cwd=str(program.parent), timeout=300)
        print(f"--- {title}: python {program.name}\n{done.stdout}", file=out)
        if done.returncode:
            print(done.stderr[-2000:], file=out)
            status = 1
    return status
