"""The bridge from callsite.torch to MLIR (examples/torch_to_mlir), in the torch-mlir peer venv:
torch-mlir's FX importer, hooked, gives every op the location callsite renders from the
Traceback of the node it comes from, with the columns torch's stack_trace text does not have."""
from __future__ import annotations

import json
import os

import pytest

from peers import ROOT, peer_python, run

#: Runs in the peer venv (cwd: the checkout, so `examples` imports): one JSON line per import.
CHILD = r'''
import json, operator, os, re, sys
import torch
import callsite.torch
from torch_mlir import ir
from torch_mlir.extras.fx_importer import GraphNodeImporter
from examples.torch_to_mlir import locations, program
from examples.torch_to_mlir.model import Model, example_input

MODEL_FILE = os.path.abspath("examples/torch_to_mlir/model.py")
TORCH_FRAME = re.compile(r'File "([^"]+)", line ([0-9]+),')
LOCATION_FRAME = re.compile(r'"((?:[^"\\]|\\.)*)":([0-9]+):([0-9]+)(?: to (?:([0-9]+))?:([0-9]+))?')

node_importers = []


class Recording(GraphNodeImporter):
    """Keeps each graph's importer: its node -> value map (`_v`, torch-mlir's own) says which
    op came from which node."""
    __slots__ = ()

    def __init__(self, *args):
        super().__init__(*args)
        node_importers.append(self)


def innermost_user_frame(traceback):
    """The innermost frame in the model's file, with its positions per CPython."""
    for frame in traceback:
        if frame.filename == MODEL_FILE:
            positions = list(frame.code.co_positions())[frame.lasti // 2]
            assert positions[0] == frame.lineno, (positions, frame.lineno)
            return positions
    return None


def innermost_location_frame(location):
    file, line, column, end_line, end_column = LOCATION_FRAME.search(str(location)).groups()
    return [file, int(line), int(end_line or line), int(column), int(end_column or column)]


decompositions = sys.argv[1] == "decomposed"
exported = program.export(Model(), example_input())
exported_names = {node.name for node in exported.graph.nodes}
module, _ = program.to_mlir(exported, decompositions,
                            graph_node_importer_cls=Recording)
report = {"nodes": [], "ops": []}
with module.context:
    node_importer, = node_importers
    for (node, index), value in node_importer._v.items():
        if node.op != "call_function" or node.target is operator.getitem:
            continue  # a getitem binds an output of its source's op: no op of its own
        if not isinstance(value, ir.Value) or not isinstance(value.owner, ir.OpView):
            continue
        traceback = callsite.torch.traceback_of(node)
        expected = innermost_user_frame(traceback) if traceback is not None else None
        torch_lines = [int(line) for file, line in TORCH_FRAME.findall(node.stack_trace or "")
                       if file == MODEL_FILE]
        report["nodes"].append({
            "node": node.name, "exported": node.name in exported_names,
            "op": value.owner.operation.name,
            "recorded": traceback is not None,
            "expected": None if expected is None else [MODEL_FILE, *expected],
            "location": innermost_location_frame(value.owner.location),
            "torch_innermost_line": torch_lines[-1] if torch_lines else None,
        })
    function, = module.body.operations
    for op in function.regions[0].blocks[0].operations:
        report["ops"].append([op.operation.name, str(op.location)])
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def peer():
    return peer_python("torch-mlir")


def child_report(python, mode):
    result = run(python, CHILD, mode, cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("mode", ["exported", "decomposed"])
def test_every_op_from_a_node_is_located_at_its_user_frame(peer, mode):
    report = child_report(peer, mode)
    nodes = report["nodes"]
    assert len(nodes) >= 10, nodes  # the model's ops (and, decomposed, what they became)
    model_file = os.path.join(ROOT, "examples", "torch_to_mlir", "model.py")
    for entry in nodes:
        assert entry["recorded"], entry  # recorded under callsite.torch, or traced back to one
        # file, line, end line, column, end column: the innermost user frame, per co_positions()
        assert entry["expected"] is not None, entry
        assert entry["location"] == entry["expected"], entry
        assert entry["location"][0] == model_file, entry
        # ...on the line torch's own stack_trace gives for the same node.
        assert entry["location"][1] == entry["torch_innermost_line"], entry
    # Ops on one line told apart by their columns alone.
    spans = {(e["location"][1], e["location"][3], e["location"][4]) for e in nodes}
    assert len({line for line, _, _ in spans}) < len(spans), spans
    if mode == "decomposed":
        assert not all(e["exported"] for e in nodes), "nothing was decomposed"
    # Every op of the function, the constants and lists a node's import adds and the return
    # included, is located by callsite: no torch-mlir reading of the text (column 0, torch's
    # own files innermost), no unknown location.
    examples = os.path.join(ROOT, "examples", "torch_to_mlir") + os.sep
    for name, location in report["ops"]:
        assert location.startswith(("loc(callsite(", 'loc("')), (name, location)
        innermost = location.split('"(')[1]
        assert innermost.startswith('"' + examples), (name, location)


def test_the_program_prints_located_mlir(peer):
    result = run(peer, "import runpy, sys; sys.argv = ['program']; "
                 "runpy.run_module('examples.torch_to_mlir.program', run_name='__main__')",
                 cwd=ROOT, timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "func.func @main" in out and "torch.aten.relu" in out, out[:2000]
    assert '"Block.forward"(' in out and "model.py\":17:" in out, out[:4000]
    table = [line for line in out.splitlines() if "  torch: " in line and "  callsite: " in line]
    assert len(table) >= 10, out[-3000:]
    assert all("model.py:" in line.split("  callsite: ")[0] for line in table), table


def test_bad_arguments_name_the_argument(peer):
    result = run(peer, r'''
import torch, callsite.torch
from examples.torch_to_mlir import locations
for call, argument in ((lambda: locations.CallsiteFxImporter(frames="x"), "frames"),):
    try:
        call()
    except TypeError as error:
        assert str(error).startswith(argument + ":"), error
        print(error)
    else:
        raise SystemExit(f"no error for {argument}")
''', cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(result.stdout.splitlines()) == 1, result.stdout
