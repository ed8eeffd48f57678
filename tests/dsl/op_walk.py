"""(op name, str(op.location)) of an op and every op nested in it, in order."""
from __future__ import annotations


def op_locations(op, out: list | None = None) -> list[tuple[str, str]]:
    out = [] if out is None else out
    out.append((op.operation.name, str(op.location)))
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                op_locations(inner, out)
    return out
