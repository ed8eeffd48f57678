"""Trace, then emit: a Traceback kept per traced node becomes the op's location at emit time
(callsite.mlir.location(traceback)), tested on examples/trace_then_emit with each installed
distribution of the bindings, each in its own process."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from peers import PEER_PACKAGES, peer_python
from mlir_support import ALL_CANDIDATES

from where import REPO  # noqa: E402

ROOT = str(REPO)
PACKAGES = [name.rpartition(".")[0] for name in ALL_CANDIDATES]  # iree.compiler, jaxlib.mlir, mlir

CHILD = r'''
import json, linecache, sys
import callsite, callsite.mlir
package = sys.argv[1]
import importlib
ir = importlib.import_module(package + ".ir")
from examples.trace_then_emit import program, tracer
from examples.trace_then_emit.emit import emit, new_context

graph = tracer.trace(program.kernel, 2)
report = {"ops": [], "same_object": None, "bytes_per_frame": None}
with new_context(package), ir.Location.unknown():
    module = emit(graph, package)
    ops = [op for op in module.body.operations[0].regions[0].blocks[0].operations
           if op.operation.name.startswith("arith.")]
    nodes = [n for n in graph.nodes if n.op != "arg"]
    for op, node in zip(ops, nodes):
        kept = [f for f in node.traceback if tracer.FRAMEWORK_FILTER.keeps(f)]
        report["ops"].append({
            "name": op.operation.name, "location": str(op.location),
            "to_mlir": node.traceback.to_mlir(tracer.FRAMEWORK_FILTER),
            "innermost_line": linecache.getline(kept[0].filename, kept[0].lineno).strip(),
            "innermost_file": kept[0].filename,
        })
    tb = nodes[0].traceback
    first = callsite.mlir.location(tb, filter=tracer.FRAMEWORK_FILTER)
    again = callsite.mlir.location(tb, filter=tracer.FRAMEWORK_FILTER)
    report["same_object"] = first is again
    report["limit_1"] = str(callsite.mlir.location(tb, filter=tracer.FRAMEWORK_FILTER, limit=1))
    report["n_ops"] = len(ops)
    report["n_nodes"] = len(nodes)
def deeper(n):
    return callsite.capture() if n == 0 else deeper(n - 1)
a, b = deeper(0), deeper(10)
report["bytes_per_frame"] = (sys.getsizeof(b) - sys.getsizeof(a)) / (len(b) - len(a))
print(json.dumps(report))
'''


@pytest.mark.parametrize("package", PACKAGES)
def test_trace_then_emit_example(package):
    _check_example(sys.executable, package)


@pytest.mark.parametrize("peer", ["catalyst", "wave"])
def test_trace_then_emit_example_on_peer(peer):
    """jaxlib 0.7.1 (Catalyst's; its bindings have no traceback switch at all) and iree 3.9."""
    _check_example(peer_python(peer), PEER_PACKAGES[peer])


def _check_example(python, package):
    ir_name = package + ".ir"
    probe = subprocess.run([python, "-c", f"import {ir_name}, {package}.dialects.func"],
                           capture_output=True, text=True, cwd=ROOT)
    if probe.returncode:
        pytest.skip(f"{ir_name} is not usable here: {probe.stderr.strip().splitlines()[-1:]}")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("CALLSITE_MLIR", None)
    run = subprocess.run([python, "-c", CHILD, package], capture_output=True, text=True,
                         cwd=ROOT, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout.strip().splitlines()[-1])
    assert report["n_ops"] == report["n_nodes"] == 4
    program = os.path.join(ROOT, "examples", "trace_then_emit", "program.py")
    expected = {  # the user's line of each node, in trace order
        "arith.addi": "s = a + b  # op: add",
        "arith.constant": "return x * factor  # op: mul (and its constant)",
        "arith.muli": "return x * factor  # op: mul (and its constant)",
        "arith.subi": "return t - a  # op: sub",
    }
    for op in report["ops"]:
        # The location is what MLIR's loc_tracebacks() would have built when the line ran.
        assert op["location"] == op["to_mlir"], op
        assert op["innermost_file"] == program, op
        assert op["innermost_line"] == expected[op["name"]], op
        assert "tracer.py" not in op["location"] and "emit.py" not in op["location"], op
    # The scale() helper's ops name the helper and, below it, the kernel line calling it.
    mul = next(op for op in report["ops"] if op["name"] == "arith.muli")
    assert mul["location"].startswith('loc(callsite("scale"(') and '"kernel"(' in mul["location"]
    assert report["same_object"] is True  # cached: the same ir.Location object again
    assert report["limit_1"].startswith('loc("kernel"(') and "callsite(" not in report["limit_1"]  # one frame: no chain
    assert report["bytes_per_frame"] == 16


def test_location_of_traceback_errors():
    code = r'''
import callsite, callsite.mlir
from iree.compiler import ir
tb = callsite.capture()
with ir.Context():
    for call, kind in ((lambda: callsite.mlir.location(tb, skip=1), TypeError),
                       (lambda: callsite.mlir.location(tb, filter="x"), TypeError),
                       (lambda: callsite.mlir.location(tb, limit=-1), ValueError)):
        try:
            call()
        except kind as e:
            print(type(e).__name__, e)
        else:
            raise SystemExit("no error")
'''
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if "No module named 'iree'" in run.stderr:
        pytest.skip("iree-base-compiler is not installed")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert "skip= applies to the calling thread's stack" in lines[0]
    assert "filter must be a callsite.Filter" in lines[1]
    assert "limit" in lines[2]
