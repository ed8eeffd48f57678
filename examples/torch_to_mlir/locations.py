"""locations — torch-mlir's FX importer with every op located by callsite.

torch-mlir's importer asks ``ContextCache.get_node_location(node)`` once per FX node and builds
that node's ops at the answer. Its own answer parses ``node.stack_trace`` back with a regular
expression: a file and a line per frame, column 0. :class:`CallsiteFxImporter` answers with
``callsite.mlir.location(callsite.torch.traceback_of(node), filter=...)`` instead: the raw
Traceback callsite captured when torch recorded the node, rendered as MLIR's
``loc_tracebacks()`` would have rendered it then, with the columns of ``co_positions()``, and
cached per context (an equal traceback gives the same ``ir.Location``).

Decompositions (``ExportedProgram.run_decompositions``, which torch-mlir's ``export_and_import``
runs) make new nodes that copy the old ones' metadata, callsite's capture with their
``stack_trace`` text: ``traceback_of`` gives it for them too. A node callsite did not record
keeps torch-mlir's own reading of its text.
"""
from __future__ import annotations

import inspect
from typing import Any

import torch
import torch.fx
import torch_mlir
import torch_mlir.ir
from torch_mlir.extras.fx_importer import ContextCache, FxImporter

import callsite
import callsite.mlir
import callsite.torch


def user_frames() -> callsite.Filter:
    """The frames that are not torch's or torch-mlir's (the model, the program running it), at
    most MLIR's default of 10."""
    frames = callsite.Filter()
    for package in (torch, torch_mlir):
        for path in package.__path__:  # torch_mlir is a namespace package: no __file__
            frames.exclude_dir(path)
    # torch's tracers run wrappers they compile from strings (export's flattening lambda, a
    # GraphModule's generated forward): their frames sit between the user's.
    frames.add_exclude(r"^<string>$")
    frames.add_exclude(r"^<eval_with_key>")
    return frames


def check_importer_hook() -> None:
    """torch-mlir has no public hook for locations: the per-node one is recognised by its shape
    (a ContextCache method taking the node, held in FxImporter's ``_cc`` slot), and a torch-mlir
    without it is an error saying so rather than ops silently located by torch-mlir's own."""
    hook = inspect.getattr_static(ContextCache, "get_node_location", None)
    if not inspect.isfunction(hook) or list(inspect.signature(hook).parameters) != ["self", "node"]:
        raise RuntimeError("torch-mlir's importer is not the one this example hooks: "
                           "ContextCache.get_node_location(self, node) is missing")
    if "_cc" not in getattr(FxImporter, "__slots__", ()):
        raise RuntimeError("torch-mlir's importer is not the one this example hooks: FxImporter "
                           "keeps no ContextCache in a `_cc` slot")


class CallsiteContextCache(ContextCache):
    """torch-mlir's per-context cache with callsite's answer to get_node_location."""

    __slots__ = ("_frames",)

    def __init__(self, context: Any, *, py_attr_tracker: Any, frames: callsite.Filter) -> None:
        super().__init__(context, py_attr_tracker=py_attr_tracker)
        self._frames = frames

    def get_node_location(self, node: torch.fx.Node) -> Any:
        traceback = callsite.torch.traceback_of(node)
        if traceback is None:  # not recorded under callsite.torch: torch-mlir's reading
            return super().get_node_location(node)
        return callsite.mlir.location(traceback, filter=self._frames, context=self._c)


class CallsiteFxImporter(FxImporter):
    """torch-mlir's FxImporter, each op located by the Traceback of the node it comes from.

    frames: which frames the locations keep (default :func:`user_frames`). Every other keyword
    is FxImporter's."""

    def __init__(self, *, frames: callsite.Filter | None = None, **options: Any) -> None:
        if frames is not None and not isinstance(frames, callsite.Filter):
            raise TypeError(f"frames: expected a callsite.Filter or None, got "
                            f"{type(frames).__qualname__}")
        check_importer_hook()
        callsite.mlir.use(torch_mlir.ir)  # location(context=...) needs the bindings registered
        super().__init__(**options)
        # Replaced before any import: the importer reads the cache only when importing.
        self._cc = CallsiteContextCache(
            self._c, py_attr_tracker=self._py_attr_tracker,
            frames=user_frames() if frames is None else frames)
