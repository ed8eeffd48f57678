"""Stable-ABI (abi3) wheels: MLIR drops traceback locations from them (llvm PR 183856; iree's
3.12+ wheels already record no frame), callsite keeps serving them: under CALLSITE_MLIR=1
MLIR's own switch gives the user's line on an abi3 build."""
from __future__ import annotations

import sys

import pytest

from peers import run

PROBE = r'''
import sys
from iree.compiler import ir
from iree.compiler._mlir_libs import _mlir
print(_mlir.__file__.endswith(".abi3.so"))
with ir.Context() as ctx, ir.Location.unknown(), ir.loc_tracebacks():
    ctx.allow_unregistered_dialects = True
    op = ir.Operation.create("custom.op")  # the user's line
print(op.location)
'''


def test_callsite_serves_tracebacks_on_an_abi3_wheel():
    theirs = run(sys.executable, PROBE)
    if "No module named 'iree'" in theirs.stderr:
        pytest.skip("iree-base-compiler is not installed")
    assert theirs.returncode == 0, theirs.stderr
    abi3, location = theirs.stdout.splitlines()
    if abi3 != "True":
        pytest.skip(f"iree's extension is not abi3 on Python {sys.version_info[:2]} (3.12+ is)")
    assert location == "loc(unknown)"  # MLIR's own records no frame on this build
    ours = run(sys.executable, PROBE, env={"CALLSITE_MLIR": "1"})
    assert ours.returncode == 0, ours.stderr
    call = 'ir.Operation.create("custom.op")'
    line, text = next((i + 1, text) for i, text in enumerate(PROBE.splitlines()) if call in text)
    col = text.index(call)
    assert ours.stdout.splitlines() == [
        "True", f'loc("<module>"("<string>":{line}:{col} to :{col + len(call)}))']
