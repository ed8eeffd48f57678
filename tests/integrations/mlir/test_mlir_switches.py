"""MLIR's two location-composition switches (llvm PR 192310: `on_explicit` USE_EXPLICIT |
USE_TRACEBACK, `current_loc` FALLBACK | NAMELOC_WRAP), in MLIR's own spelling, on bindings that
have them (flydsl._mlir, torch_mlir; each peer in its own venv): every case prints the same
text under CALLSITE_MLIR=1 as under MLIR's own walk. On bindings that predate them (iree 3.9),
callsite serves them through the same switches and through its own API."""
from __future__ import annotations

import sys

import pytest

from peers import PEER_PACKAGES, peer_python, run

CASES = r'''
import sys, importlib
package = sys.argv[1]
ir = importlib.import_module(package + ".ir")
cext = importlib.import_module(package + ".dialects._ods_common")._cext
E, C = ir.OnExplicitAction, ir.CurrentLocAction

def build(**kw):
    return ir.Operation.create("custom.op", **kw)

def show(tag, op):
    print(tag, op.location)

with ir.Context() as ctx, ir.Location.unknown():
    ctx.allow_unregistered_dialects = True
    scope = ir.Location.name("Outer", childLoc=ir.Location.name("Inner", childLoc=ir.Location.unknown()))
    explicit = ir.Location.file("explicit.py", 7, 3)
    for on_explicit in (E.USE_EXPLICIT, E.USE_TRACEBACK):
        for current in (C.FALLBACK, C.NAMELOC_WRAP):
            for depth in (None, 0, 1, 3):
                with ir.loc_tracebacks(max_depth=depth, on_explicit_actn=on_explicit,
                                       current_loc_actn=current):
                    tag = f"{on_explicit.name}/{current.name}/{depth}"
                    show(tag + " plain", build())
                    show(tag + " explicit", build(loc=explicit))
                    with scope:
                        show(tag + " scoped", build())
                        show(tag + " scoped+explicit", build(loc=explicit))
                    with ir.Location.file("current.py", 1, 1):  # not a NameLoc: no wrap
                        show(tag + " filecurrent", build())
    # The actions without the switch: no effect (the explicit loc, else Location.current).
    cext.globals.set_traceback_action_on_explicit_loc(E.USE_TRACEBACK)
    cext.globals.set_traceback_action_on_current_loc(C.NAMELOC_WRAP)
    with scope:
        show("disabled explicit", build(loc=explicit))
        show("disabled plain", build())
    print("getters", cext.globals.traceback_action_on_explicit_loc(),
          cext.globals.traceback_action_on_current_loc())
'''


@pytest.mark.parametrize("peer", ["flydsl", "torch-mlir"])
def test_switches_print_mlir_text(peer):
    _check_cases(peer_python(peer), PEER_PACKAGES[peer])


def test_switches_print_mlir_text_with_the_installed_iree():
    probe = run(sys.executable, "from iree.compiler import ir; ir.OnExplicitAction")
    if probe.returncode:
        pytest.skip(f"no iree-base-compiler with the two actions here: {probe.stderr[-120:]}")
    if sys.version_info >= (3, 12):
        pytest.skip("iree's 3.12+ wheels are abi3: MLIR's own walk records no frame to compare")
    _check_cases(sys.executable, "iree.compiler")


def _check_cases(python, package):
    theirs = run(python, CASES, package)
    assert theirs.returncode == 0, theirs.stderr
    assert "callsite(" in theirs.stdout, "MLIR's own walk records no frames here"
    ours = run(python, CASES, package, env={"CALLSITE_MLIR": "1"})
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout.splitlines() == theirs.stdout.splitlines()
    assert len(ours.stdout.splitlines()) == 2 * 2 * 4 * 5 + 3


PREDATING = r'''
import sys, callsite, callsite.mlir
from iree.compiler import ir
with ir.Context() as ctx, ir.Location.unknown():
    ctx.allow_unregistered_dialects = True
    explicit = ir.Location.file("explicit.py", 7, 3)
    task = ir.Location.name("Task", childLoc=ir.Location.unknown())
    # MLIR's own switch, served by callsite (CALLSITE_MLIR=1), with the new keywords:
    with ir.loc_tracebacks(on_explicit="use_traceback", current_loc="nameloc_wrap"), task:
        print(ir.Operation.create("custom.op", loc=explicit).location)
    # callsite's own API, the same composition:
    with callsite.mlir.auto_locations(on_explicit="use_traceback", current_loc="nameloc_wrap"), task:
        print(ir.Operation.create("custom.op", loc=explicit).location)
    with callsite.mlir.auto_locations(current_loc="nameloc_wrap"), task:
        print(ir.Operation.create("custom.op", loc=explicit).location)
'''


def test_switches_on_bindings_that_predate_them():
    python = peer_python("wave")  # iree-base-compiler 3.9: loc_tracebacks(max_depth=) only
    probe = run(python, "from iree.compiler import ir; ir.loc_tracebacks(on_explicit='use_traceback')")
    assert "TypeError" in probe.stderr  # MLIR's own does not know the keyword
    ours = run(python, PREDATING, env={"CALLSITE_MLIR": "1"})
    assert ours.returncode == 0, ours.stderr
    first, second, third = ours.stdout.splitlines()
    lines = [i + 1 for i, text in enumerate(PREDATING.splitlines())
             if 'ir.Operation.create("custom.op", loc=explicit)' in text]
    # The traceback replaces the explicit loc, wrapped in the scope's name: the calling line.
    assert first == f'loc("Task"("<module>"("<string>":{lines[0]}:14 to :60)))'
    assert second == f'loc("Task"("<module>"("<string>":{lines[1]}:14 to :60)))'
    assert third == 'loc("Task"("explicit.py":7:3))'
