"""Where callsite is deliberately more lenient than MLIR's own walk (docs/mlir.md, "Documented
differences"), each shown against the real bindings where MLIR's behaviour differs, each in
its own process."""
from __future__ import annotations

import pytest

from peers import PEER_PACKAGES, peer_python, run

NO_CURRENT_CONTEXT = r'''
import sys, importlib
ir = importlib.import_module(sys.argv[1] + ".ir")
ctx = ir.Context()
use_traceback = ir.OnExplicitAction.USE_TRACEBACK
for tag, kw in (("use_explicit", {}), ("use_traceback", {"on_explicit_actn": use_traceback})):
    try:
        with ir.loc_tracebacks(**kw):
            module = ir.Module.create(ir.Location.unknown(ctx))  # no `with ctx:` around
        print(tag, "ok", module.operation.location)
    except RuntimeError as e:
        print(tag, "RuntimeError", str(e).split(".")[0])
'''


@pytest.mark.parametrize("peer", ["flydsl", "torch-mlir"])
def test_module_create_with_an_explicit_location_and_no_current_context(peer):
    """MLIR's walk needs Context.current and raises without one, even though the explicit
    location names the context (this is what makes torch-mlir's export_and_import fail under
    MLIR's loc_tracebacks()). callsite takes the explicit location's context: use_explicit
    keeps it, use_traceback replaces it by the caller's line."""
    python, package = peer_python(peer), PEER_PACKAGES[peer]
    theirs = run(python, NO_CURRENT_CONTEXT, package).stdout.splitlines()
    assert theirs == ["use_explicit RuntimeError An MLIR function requires a Context but none "
                      "was provided in the call or from the surrounding environment"] * 1 + \
        ["use_traceback RuntimeError An MLIR function requires a Context but none was provided "
         "in the call or from the surrounding environment"], theirs
    ours = run(python, NO_CURRENT_CONTEXT, package, env={"CALLSITE_MLIR": "1"})
    assert ours.returncode == 0, ours.stderr
    call = "ir.Module.create(ir.Location.unknown(ctx))"
    line, text = next((i + 1, text) for i, text in enumerate(NO_CURRENT_CONTEXT.splitlines())
                      if call in text)
    col = text.index(call)
    assert ours.stdout.splitlines() == [
        "use_explicit ok loc(unknown)",
        f'use_traceback ok loc("<module>"("<string>":{line}:{col} to :{col + len(call)}))',
    ]


NO_MAX_DEPTH = r'''
from iree.compiler import ir
def deep(n):
    if n:
        return deep(n - 1)
    with ir.Context() as ctx, ir.Location.unknown(), ir.loc_tracebacks():
        ctx.allow_unregistered_dialects = True
        return str(ir.Operation.create("custom.op").location)
try:
    print(deep(12).count('"deep"'))
except TypeError as e:
    print("TypeError", str(e).splitlines()[0])
'''


def test_loc_tracebacks_without_max_depth_on_iree_3_9():
    """iree 3.9's ir.loc_tracebacks() passes max_depth=None to a setter that wants an int
    (fixed upstream by llvm PR 170831). callsite's, served under the same name, keeps the
    current limit (10) as the fixed MLIR does."""
    python = peer_python("wave")
    theirs = run(python, NO_MAX_DEPTH)
    assert theirs.stdout.startswith("TypeError set_loc_tracebacks_frame_limit()"), theirs.stdout
    ours = run(python, NO_MAX_DEPTH, env={"CALLSITE_MLIR": "1"})
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.strip() == "10"  # ten kept frames, all of them deep()'s
