"""Export the model under callsite.torch, import it with torch-mlir, print the MLIR with
locations, then each node's innermost user frame: the line torch's text gives, and the line and
columns callsite gives.

    python -m examples.torch_to_mlir.program [--no-decompositions]

(torch-mlir's ``export_and_import`` runs its decompositions by default; with
``--no-decompositions`` the exported graph is imported as it is.)
"""
from __future__ import annotations

import re
import sys
from typing import Any

import torch
import torch_mlir.fx
from torch_mlir import ir
from torch_mlir.dialects import torch as torch_dialect

import callsite.mlir
import callsite.torch

from .locations import CallsiteFxImporter, user_frames
from .model import Model, example_input

#: One frame of torch's text, as torch-mlir's own importer reads it.
TORCH_FRAME = re.compile(r'File "([^"]+)", line ([0-9]+),')


def export(model: torch.nn.Module, example: torch.Tensor) -> torch.export.ExportedProgram:
    if not callsite.torch.accelerate():
        raise SystemExit("callsite.torch does not serve this torch: "
                         f"{callsite.torch.status()['refusal']}")
    return torch.export.export(model, (example,))


def to_mlir(program: torch.export.ExportedProgram, decompositions: bool = True,
            **options: Any) -> tuple[Any, Any]:
    """(the torch-mlir module, the importer) of `program`, each op located by callsite;
    options: FxImporter's keywords."""
    context = ir.Context()
    torch_dialect.register_dialect(context)
    importer = CallsiteFxImporter(context=context, **options)
    module = torch_mlir.fx.export_and_import(
        program, fx_importer=importer,
        **({} if decompositions else {"decomposition_table": {}}))
    return module, importer


def innermost_columns(graph: torch.fx.Graph, context: Any) -> list[str]:
    """Per op node: torch's innermost user frame (file:line, what torch-mlir can read) beside
    callsite's (file:line:column to :end column)."""
    frames = user_frames()
    lines = []
    with context:
        for node in graph.nodes:
            traceback = callsite.torch.traceback_of(node)
            if node.op != "call_function" or traceback is None or not node.stack_trace:
                continue
            theirs = [(f, int(n)) for f, n in TORCH_FRAME.findall(node.stack_trace)
                      if frames.keeps(f)]
            ours = callsite.mlir.location(traceback, filter=frames, limit=1)
            lines.append(f"{node.name:>10}  torch: {'%s:%d' % theirs[-1] if theirs else '-'}"
                         f"  callsite: {ours}")
    return lines


def main(decompositions: bool = True) -> str:
    program = export(Model(), example_input())
    # The exported graph, before torch-mlir's import erases its parameter placeholders.
    columns = innermost_columns(program.graph, ir.Context())
    module, _ = to_mlir(program, decompositions)
    # The weights' bytes elided: the locations are what this prints.
    asm = module.operation.get_asm(enable_debug_info=True, large_resource_limit=16)
    return asm + "\n" + "\n".join(columns)


if __name__ == "__main__":
    print(main(decompositions="--no-decompositions" not in sys.argv[1:]))
