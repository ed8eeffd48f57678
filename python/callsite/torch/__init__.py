"""PyTorch graph stack traces served by callsite.

After :func:`accelerate` (or with ``CALLSITE_TORCH=1`` in the environment), every
``node.stack_trace`` that ``torch.fx``'s ``TracerBase.create_node`` records (``fx.Tracer`` with
``record_stack_traces``, ``make_fx(record_stack_traces=True)``, export's tracers) comes from a
raw callsite capture instead of torch's symbolized walk. The text is torch's own, byte for
byte: torch's filter decisions, made once per file and function name, and torch's formatting
(``traceback.StackSummary.format``). One native call per node (``_TorchTexts.record``) captures
the stack, keeps torch's frames and looks their text up in process-wide tables keyed by the
kept (file, line, name) frames, checked against the copy of each source file ``linecache``
holds; each distinct frame is formatted once per process. A tracer whose class overrides
``_filter_traceback_frames`` gets its override called with a ``StackSummary`` of the same
frames torch would have given it.

torch's code is recognised by structure (``callsite.torch._recognise``); where it differs,
:func:`accelerate` warns once and torch keeps its own path.

Under :func:`frames` (a context manager, per thread and asyncio task) the nodes recorded get
the frames a ``callsite.Filter`` keeps instead of torch's rules, in the same text format.

The state and the recording live in ``callsite.torch._recording``; this module is the API.
"""
from __future__ import annotations

import contextlib
import importlib
import os
import sys
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

from .._callsite import Filter, Traceback, _TorchTexts
from .._callsite import boundary as _Boundary
from .._switches import BY_INTEGRATION, read_at_start_up
from .._warnings import CallsiteWarning
from . import _detect, _recording

_SWITCH = BY_INTEGRATION["torch"]
VARIABLE = _SWITCH.variable
#: torch versions whose internals were read and matched against the shapes callsite
#: reproduces; other versions are served where their code has those shapes.
CHECKED_VERSIONS = _detect.CHECKED_VERSIONS

__all__ = ["CHECKED_VERSIONS", "TorchWarning", "accelerate", "clear_caches", "decelerate",
           "frames", "is_accelerated", "status", "traceback_of"]


class TorchWarning(CallsiteWarning, RuntimeWarning):
    """torch's stack-trace code is not what callsite reproduces: torch's own path stays.

    Example:
        ::

            import warnings
            import callsite.torch

            warnings.simplefilter("error", callsite.torch.TorchWarning)  # an unrecognised torch is fatal
    """


@contextlib.contextmanager
def frames(filter: Filter | None = None, boundary: object = None) -> Iterator[Filter]:
    """Nodes that torch.fx records in this scope (``fx.Tracer`` with ``record_stack_traces``,
    ``make_fx(record_stack_traces=True)``, ``torch.export.export(strict=False)``) get the
    frames `filter` keeps as their ``stack_trace``, in torch's text format (innermost kept frame
    last), instead of torch's rules (``forward`` frames).

    filter: a callsite.Filter (default Filter.default()), its rules and limit as for
    callsite.mlir.auto_locations. boundary: a kernel (function, method or code object) at whose
    innermost frame every stack stops, as inside ``with callsite.boundary(kernel)``: its line is
    kept whatever the filter says. The scope is the calling thread's (and asyncio task's) only;
    scopes nest, the innermost one wins. A tracer whose class overrides
    ``_filter_traceback_frames`` keeps its own filter. Accelerates torch.fx (as accelerate()).
    Yields the Filter in force.

    Raises:
        TypeError: ``filter`` is not a ``callsite.Filter`` (or ``boundary`` not a kernel),
            as in ``callsite.torch.frames('user').__enter__()``.
        RuntimeError: torch's stack-trace code is not what callsite reproduces.

    Example:
        ::

            import torch
            from torch.fx.experimental.proxy_tensor import make_fx
            import callsite, callsite.torch

            def loss(out):                                # not a forward: torch's rules drop it
                return (out * out).mean()

            def step(x):
                return loss(x + 1)

            user = callsite.Filter(exclude=[r"/torch/"])  # torch's frames are not the user's
            with callsite.torch.frames(user):
                graph = make_fx(step, record_stack_traces=True)(torch.randn(3))
            node = next(n for n in graph.graph.nodes if n.op == "call_function" and "mul" in str(n.target))
            print(node.meta["stack_trace"])               # ends with loss's line
    """
    if filter is None:
        filter = Filter.default()
    elif not isinstance(filter, Filter):
        raise TypeError(f"callsite.torch.frames(): filter must be a callsite.Filter or None, "
                        f"not {type(filter).__module__}.{type(filter).__qualname__}")
    kernel = None
    if boundary is not None:
        try:
            kernel = _Boundary(boundary)
        except TypeError as error:
            raise TypeError(f"callsite.torch.frames(): boundary: {error}") from None
    if not accelerate():
        raise RuntimeError(f"callsite.torch.frames(): torch's own stack traces are kept, so no "
                           f"frames can be chosen: {_recording._refusal}")
    token = _recording._chosen.set(filter)
    try:
        if kernel is None:
            yield filter
        else:
            with kernel:
                yield filter
    finally:
        _recording._chosen.reset(token)


def _start_up_accelerate(proxy: ModuleType) -> None:
    """The start-up hook's call (CALLSITE_TORCH on) once torch.fx.proxy is imported."""
    _install(proxy)


def _install(proxy: ModuleType) -> None:
    """Installs the recording; a TorchWarning, pointing at the caller of accelerate() (or of
    the start-up hook), where torch's code is not recognised."""
    message = _recording._install(proxy)
    if message is not None:
        warnings.warn(message, TorchWarning, stacklevel=3)


def accelerate() -> bool:
    """Serves torch.fx's node stack traces with callsite (idempotent). Imports torch.fx.
    Returns False (after one TorchWarning) where torch's code is not recognised.

    Example:
        ::

            import torch
            import callsite.torch

            class Model(torch.nn.Module):
                def forward(self, x):
                    return torch.relu(x) + 1          # each node's stack_trace names this line

            print(callsite.torch.accelerate())        # True where torch's internals are recognised
            tracer = torch.fx.Tracer()
            tracer.record_stack_traces = True         # as make_fx and torch.export ask
            graph = tracer.trace(Model())
            print([n.stack_trace for n in graph.nodes if n.op == "call_function"][0])
    """
    _install(importlib.import_module("torch.fx.proxy"))
    return _recording._state is not None


def decelerate() -> bool:
    """Back to torch's own create_node (False: it was not accelerated).

    Example:
        ::

            import torch.fx
            import callsite.torch

            callsite.torch.accelerate()
            print(callsite.torch.decelerate(), callsite.torch.is_accelerated())   # True False
    """
    return _recording._uninstall()


def is_accelerated() -> bool:
    """True while callsite serves torch.fx's node stack traces (accelerate(), CALLSITE_TORCH=1).

    Example:
        ::

            import callsite.torch

            print(callsite.torch.is_accelerated())    # False until accelerate() or CALLSITE_TORCH=1
    """
    return _recording._state is not None


def clear_caches() -> None:
    """Drops the cached texts, each frame's formatted lines, what is kept of linecache's
    copies and the filter decisions.

    Example:
        ::

            import callsite.torch

            callsite.torch.clear_caches()
    """
    _recording._clear()


def traceback_of(node: Any) -> Traceback | None:
    """The raw callsite Traceback (innermost first) captured when `node` (a ``torch.fx.Node``)
    was recorded under accelerate(), or when the node it was made from was (torch's passes copy
    a node's metadata, and this capture with it); None for a node whose ``stack_trace`` is not
    the text recorded with a capture. ``callsite.mlir`` renders it as an MLIR location with
    columns: ``callsite.mlir.location(traceback_of(node), filter=...)`` or ``.to_mlir(filter)``.
    A node whose text was copied without the capture (export's inserted
    ``_assert_tensor_metadata`` nodes) gets the capture of the nearest node of its graph
    recorded with that text.

    Raises:
        TypeError: ``node`` is not a ``torch.fx.Node``, as in
            ``callsite.torch.traceback_of(3)``.

    Example:
        ::

            import torch
            import callsite, callsite.torch

            class Model(torch.nn.Module):
                def forward(self, x):
                    return x * 2

            callsite.torch.accelerate()
            tracer = torch.fx.Tracer()
            tracer.record_stack_traces = True
            node = next(n for n in tracer.trace(Model()).nodes if n.op == "call_function")
            user = callsite.Filter(exclude=[r"/torch/"])              # torch's frames are not the user's
            print(callsite.torch.traceback_of(node).to_mlir(user))  # forward's line, with columns
    """
    # A Node exists only once torch.fx.node is imported: looked up, never imported here.
    node_module = sys.modules.get("torch.fx.node")
    node_type = getattr(node_module, "Node", None)
    if node_type is None or not isinstance(node, node_type):
        raise TypeError(f"callsite.torch.traceback_of: node must be a torch.fx.Node, not "
                        f"{type(node).__module__}.{type(node).__qualname__}")
    meta = getattr(node, "meta", None)
    if not isinstance(meta, dict):
        return None
    text = meta.get("stack_trace")
    found = _recording._capture_for(meta, text)
    if found is not None or not isinstance(text, str) or not text:
        return found
    # A pass that copied the text alone (export's inserted _assert_tensor_metadata nodes copy
    # the stack_trace of the node they check, not the rest of its metadata): the capture of
    # the nearest node of the graph recorded with this text, which names the same frames.
    before, after = node, node
    while before is not None or after is not None:
        for neighbour in (after, before):
            if neighbour is not None and neighbour is not node:
                found = _recording._capture_for(getattr(neighbour, "meta", None), text)
                if found is not None:
                    return found
        before = _recording._step(before, "prev")
        after = _recording._step(after, "next")
    return None


def status() -> dict[str, Any]:
    """For ``python -m callsite doctor``: whether torch.fx's stack traces are callsite's, the
    switch, and why not. Imports nothing (torch's version is read from its metadata until
    torch is imported).

    Example:
        ::

            import callsite.torch

            print(callsite.torch.status())            # what `python -m callsite doctor` shows for torch
    """
    switched_on = False
    try:
        switched_on = _SWITCH.parse(os.environ.get(VARIABLE))
        switch = None
    except ValueError as error:
        switch = str(error)
    waiting = _detect.waiting()
    refusal = _recording._refusal
    if _recording._state is not None:
        summary = "on: torch.fx's node stack traces are built by callsite"
    elif refusal is not None:
        summary = f"off: torch's own stack traces kept ({refusal})"
    elif switch is not None:
        summary = f"off: {switch}"
    elif waiting:
        summary = f"on once torch.fx is imported ({VARIABLE}=1)"
    elif switched_on and not read_at_start_up(_SWITCH):
        summary = (f"off: {VARIABLE} is set but the start-up hook did not run in this process "
                   f"(python -S, or an interpreter without site)")
    else:
        summary = f"off ({VARIABLE}=1 or callsite.torch.accelerate() turns it on)"
    cached = _TorchTexts.cached_texts()
    return {
        "status": summary,
        "accelerated": _recording._state is not None,
        VARIABLE: os.environ.get(VARIABLE),
        "waiting_for_torch_fx": waiting,
        "torch": _torch_version(),
        "refusal": refusal,
        "checked_versions": list(CHECKED_VERSIONS),
        "cached_texts": cached,
    }


def _torch_version() -> str | None:
    """The imported torch's version, else the installed one's, else None."""
    module = sys.modules.get("torch")
    if module is not None:
        return str(getattr(module, "__version__", "?"))
    import importlib.metadata

    try:
        return f"{importlib.metadata.version('torch')} (installed, not imported)"
    except importlib.metadata.PackageNotFoundError:
        return None
