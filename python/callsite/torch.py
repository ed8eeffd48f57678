"""PyTorch graph stack traces served by callsite.

After :func:`accelerate` (or with ``CALLSITE_TORCH=1`` in the environment), every
``node.stack_trace`` that ``torch.fx``'s ``TracerBase.create_node`` records (``fx.Tracer`` with
``record_stack_traces``, ``make_fx(record_stack_traces=True)``, export's tracers) comes from a
raw callsite capture instead of torch's symbolized walk. The text is torch's own, byte for
byte: torch's filter decisions, made once per code object, and torch's formatting
(``traceback.StackSummary.format``), done once per distinct raw stack. A tracer whose class
overrides ``_filter_traceback_frames`` gets its override called with a ``StackSummary`` of the
same frames torch would have given it.

torch's code is recognised by structure (``callsite._torch_recognise``); where it differs,
:func:`accelerate` warns once and torch keeps its own path.
"""
from __future__ import annotations

import importlib
import linecache
import os
import sys
import threading
import traceback as _traceback
import warnings
import weakref
from types import CodeType, ModuleType
from typing import Any

from ._callsite import Traceback, capture
from ._torch_detect import (CHECKED_VERSIONS, VARIABLE, ProxyImportWatcher, switch_value,
                            when_proxy_imported)
from ._warnings import CallsiteWarning

# torch's modules are imported by name (importlib), never by an import statement: a type
# checker in a user's environment without torch would report them missing in callsite's code.

__all__ = ["CHECKED_VERSIONS", "TorchWarning", "accelerate", "decelerate", "is_accelerated",
           "status", "traceback_of", "clear_caches"]


class TorchWarning(CallsiteWarning, RuntimeWarning):
    """torch's stack-trace code is not what callsite reproduces: torch's own path stays."""


class _State:
    """What one accelerate() installed."""

    def __init__(self, tracer_base: type, original: Any, default_filter: Any) -> None:
        self.tracer_base = tracer_base
        self.original_create_node = original
        self.default_filter = default_filter
        self.installed: Any = None


_state: _State | None = None
#: Whether node.stack_trace = text is the meta write alone (checked at install): Node's
#: __setattr__ would otherwise cost more than the rest of the recording per node.
_meta_write = False
_refusal: str | None = None
_lock = threading.Lock()

#: node -> its raw Traceback (lives as long as the node).
_tracebacks: weakref.WeakKeyDictionary[Any, Traceback] = weakref.WeakKeyDictionary()


class _Caches:
    """The filter decisions and texts: they hold code objects, so they live only while some
    tracer that filled them is alive (dropped with the last one)."""

    def __init__(self) -> None:
        self.texts: dict[tuple[Traceback, bool], str | None] = {}
        self.decisions: dict[CodeType, tuple[bool, bool, bool]] = {}
        self.uninteresting_function: Any = None
        self.uninteresting: frozenset[str] = frozenset()
        self.anchors: frozenset[tuple[str, str]] = frozenset()
        self.live_tracers = 0
        self.seen: weakref.WeakSet[Any] = weakref.WeakSet()
        # (weak reference to the tracer of the previous node, whether its class overrides
        # the filter): one tuple, so a thread never reads one tracer's ref with another's flag.
        self.current: tuple[Any, bool] = (_dead_ref, True)
        # torch's modules holding the rules, looked up once (an import statement per node
        # would cost more than the rest of the recording).
        self.proxy: Any = None
        self.symbolic_shapes: Any = None

    def clear(self) -> None:
        self.texts.clear()
        self.decisions.clear()
        self.uninteresting_function = None
        self.current = (_dead_ref, True)


def _dead_ref() -> None:
    return None


_caches = _Caches()


def _tracer_gone() -> None:
    with _lock:
        _caches.live_tracers -= 1
        if _caches.live_tracers <= 0:
            _caches.live_tracers = 0
            _caches.clear()


def _note_tracer(tracer: Any) -> Any:
    """Counts a tracer the first time it records (the caches die with the last one) and
    returns a weak reference to it, or None when it cannot be weakly referenced."""
    try:
        ref = weakref.ref(tracer)
        if tracer in _caches.seen:
            return ref
        _caches.seen.add(tracer)
        weakref.finalize(tracer, _tracer_gone)
    except TypeError:  # not weak-referenceable: its entries go with clear_caches()
        return None
    with _lock:
        _caches.live_tracers += 1
    return ref


def _refresh_rules() -> None:
    """Re-reads torch's rules when they may have changed: uninteresting_files (the function
    torch's filter calls for each node) and the registered stack-trace anchors."""
    if _caches.proxy is None:
        _caches.proxy = importlib.import_module("torch.fx.proxy")
        _caches.symbolic_shapes = importlib.import_module("torch.fx.experimental.symbolic_shapes")
    function = _caches.symbolic_shapes.uninteresting_files
    anchors = _caches.proxy._STACK_TRACE_ANCHORS
    if function is not _caches.uninteresting_function or anchors != _caches.anchors:
        _caches.texts.clear()
        _caches.decisions.clear()
        rules = (frozenset(function()), frozenset(anchors))
        if rules != (_caches.uninteresting, _caches.anchors):
            _stack_texts.clear()  # made under other rules
        _caches.uninteresting, _caches.anchors = rules
        _caches.uninteresting_function = function


def _decision(code: CodeType) -> tuple[bool, bool, bool]:
    """(named forward, kept by forward-only mode, not an uninteresting file)."""
    found = _caches.decisions.get(code)
    if found is None:
        filename, name = code.co_filename, code.co_name
        forward = name == "forward"
        found = (forward,
                 forward or filename.endswith("torch/__init__.py")
                 or (filename, name) in _caches.anchors,
                 filename not in _caches.uninteresting)
        _caches.decisions[code] = found
    return found


def _frames(tb: Traceback) -> list[tuple[CodeType, str, int | None, str]]:
    """Python frames outermost first as torch's walk gives them: (code, file, line, name)."""
    frames = []
    for frame in reversed(tb.frames):
        code = frame.code
        if code is None:  # a native frame: torch's walk does not see it
            continue
        frames.append((code, code.co_filename, frame.lineno, code.co_name))
    return frames


#: A frame's formatted lines, keyed by what StackSummary.format_frame_summary reads (file, line
#: number, name, its keyword arguments), with the linecache entry they were read from: strings
#: only, so they outlive tracers (most frames recur in every graph a program traces) without
#: keeping code alive; an entry is used only while linecache holds that same copy of the file.
_frame_texts: dict[tuple[Any, ...], tuple[str, Any]] = {}
#: Past this many entries, a cache of strings starts over (a program whose stacks never repeat).
_TEXTS_MAX = 1 << 16


def _remember(cache: dict[tuple[Any, ...], Any], key: tuple[Any, ...], entry: Any) -> None:
    if len(cache) >= _TEXTS_MAX:
        cache.clear()
    cache[key] = entry


if sys.version_info >= (3, 11):
    class _FormattedOnce(_traceback.StackSummary):
        """StackSummary.format as CPython writes it (its order, its repetition cut-off), each
        frame's own lines formatted once."""

        def format_frame_summary(self, frame_summary: Any, **kwargs: Any) -> str:
            key = (frame_summary.filename, frame_summary.lineno, frame_summary.name,
                   *kwargs.items())
            source = linecache.cache.get(frame_summary.filename)
            found = _frame_texts.get(key)
            if found is not None and found[1] is source:
                return found[0]
            text: str = super().format_frame_summary(frame_summary, **kwargs)
            # The copy the format read (None: linecache has none, and the text has no line).
            _remember(_frame_texts, key, (text, linecache.cache.get(frame_summary.filename)))
            return text
else:  # 3.10's StackSummary.format formats each frame inline, with no method to serve
    _FormattedOnce = _traceback.StackSummary


def _summary(frames: list[tuple[CodeType, str, int | None, str]],
             kind: type[_traceback.StackSummary] = _traceback.StackSummary,
             ) -> _traceback.StackSummary:
    stack = kind()
    for _, filename, lineno, name in frames:
        stack.append(_traceback.FrameSummary(filename, lineno, name, lookup_line=False))
    return stack


#: Texts by the stack they were made from, spelt as strings (torch's mode, then file, line and
#: name of each frame, outermost first), with the linecache entries of the files their lines
#: came from: they outlive tracers, so a stack traced again in a later graph is not formatted
#: again, without keeping code alive; an entry holds while linecache has those same copies.
_stack_texts: dict[tuple[Any, ...], tuple[str | None, tuple[tuple[str, Any], ...]]] = {}


def _default_text(tb: Traceback, forward_only: bool) -> str | None:
    frames = _frames(tb)
    if not frames:
        return None
    key = (forward_only, *[frame[1:] for frame in frames])
    found = _stack_texts.get(key)
    if found is not None and all(linecache.cache.get(name) is source for name, source in found[1]):
        return found[0]
    kept = _kept(frames, forward_only)
    text = "".join(_summary(kept, _FormattedOnce).format()).strip() if kept else None
    # The copies of the files the text's lines came from (None: a file linecache has no copy
    # of, which the text shows without a line until one is registered).
    sources = {frame[1]: linecache.cache.get(frame[1]) for frame in kept}
    _remember(_stack_texts, key, (text, tuple(sources.items())))
    return text


def _kept(frames: list[tuple[CodeType, str, int | None, str]],
          forward_only: bool) -> list[tuple[CodeType, str, int | None, str]]:
    """The frames torch's default filter keeps (outermost first)."""
    if forward_only:
        kept = [frame for frame in frames if _decision(frame[0])[1]]
    else:
        kept = []
        for i, frame in enumerate(frames):
            if _decision(frame[0])[0]:
                kept = frames[i:]
                break
    return [frame for frame in kept if _decision(frame[0])[2]]


_MISSING = object()


def _record_stack_trace(tracer: Any, node: Any) -> None:
    """The recording block of TracerBase.create_node, served by callsite."""
    tb = capture(1)  # innermost: create_node, as torch's walk without extract's frame
    _tracebacks[node] = tb
    caches = _caches
    ref, overrides = caches.current
    if ref() is not tracer:
        overrides = _new_tracer(tracer)
    if overrides:
        _record_through_override(tracer, node, tb)
        return
    if caches.symbolic_shapes.uninteresting_files is not caches.uninteresting_function \
            or caches.proxy._STACK_TRACE_ANCHORS != caches.anchors:
        _refresh_rules()
    key = (tb, tracer._record_forward_stack_traces_only)
    text = caches.texts.get(key, _MISSING)
    if text is _MISSING:
        text = caches.texts[key] = _default_text(tb, key[1])
    if text:
        if _meta_write:
            node.meta["stack_trace"] = text
        else:
            node.stack_trace = text


def _new_tracer(tracer: Any) -> bool:
    """A node from a tracer other than the previous node's: notes it, re-reads torch's rules
    and returns whether its class overrides _filter_traceback_frames."""
    state = _state
    overrides = state is None or \
        type(tracer)._filter_traceback_frames is not state.default_filter
    if overrides:
        try:
            _caches.current = (weakref.ref(tracer), True)
        except TypeError:
            _caches.current = (_dead_ref, True)
        return True
    ref = _note_tracer(tracer)
    _refresh_rules()
    _caches.current = (ref or _dead_ref, False)
    return False


def _record_through_override(tracer: Any, node: Any, tb: Traceback) -> None:
    """torch's recording block with callsite's frames: the tracer's own filter is called with
    the StackSummary torch's walk would have given it."""
    summary = _summary(_frames(tb))
    if summary:
        summary = tracer._filter_traceback_frames(summary)
        if summary:
            node.stack_trace = "".join(summary.format()).strip()


def _install(proxy: ModuleType) -> None:
    global _state, _refusal, _meta_write
    # ast and inspect: imported when torch.fx is, not by `python -m callsite doctor`.
    from . import _torch_recognise as recognise

    with _lock:
        if _state is not None:
            return
        try:
            torch_traceback = importlib.import_module("torch.utils._traceback")

            tracer_base = proxy.TracerBase
            default_filter = recognise.check_default_filter(tracer_base)
            recognise.check_symbolization(torch_traceback)
            if proxy.CapturedTraceback is not torch_traceback.CapturedTraceback:
                raise recognise.Unrecognised("torch.fx.proxy.CapturedTraceback is not "
                                   "torch.utils._traceback's")
            rebuilt = recognise.rebuilt_create_node(tracer_base, proxy, _record_stack_trace)
            node_type = importlib.import_module("torch.fx.node").Node
            meta_write = recognise.stack_trace_setter_is_meta_write(node_type)
        except recognise.Unrecognised as error:
            _refusal = str(error)
            warnings.warn(f"callsite.torch: torch's own stack traces kept: {error} (callsite "
                          f"checked torch {', '.join(CHECKED_VERSIONS)})", TorchWarning,
                          stacklevel=3)
            return
        state = _State(tracer_base, vars(tracer_base)["create_node"], default_filter)
        state.installed = rebuilt
        _meta_write = meta_write
        tracer_base.create_node = rebuilt
        _state = state
        _refusal = None


def accelerate() -> bool:
    """Serves torch.fx's node stack traces with callsite (idempotent). Imports torch.fx.
    Returns False (after one TorchWarning) where torch's code is not recognised."""
    _install(importlib.import_module("torch.fx.proxy"))
    return _state is not None


def decelerate() -> bool:
    """Back to torch's own create_node (False: it was not accelerated)."""
    global _state
    with _lock:
        state = _state
        if state is None:
            return False
        if vars(state.tracer_base).get("create_node") is state.installed:
            setattr(state.tracer_base, "create_node", state.original_create_node)
        _state = None
        _caches.clear()
        return True


def is_accelerated() -> bool:
    return _state is not None


def clear_caches() -> None:
    """Drops the cached filter decisions and texts (and the code objects they hold), and each
    frame's formatted lines."""
    with _lock:
        _caches.clear()
        _frame_texts.clear()
        _stack_texts.clear()


def traceback_of(node: Any) -> Traceback | None:
    """The raw callsite Traceback (innermost first) captured when `node` (a ``torch.fx.Node``)
    was created under accelerate(); None for a node created otherwise. ``callsite.mlir``
    renders it as an MLIR location with columns:
    ``callsite.mlir.location(traceback_of(node), filter=...)`` or ``.to_mlir(filter)``.
    Raises TypeError for anything that is not a torch.fx.Node."""
    # A Node exists only once torch.fx.node is imported: looked up, never imported here.
    node_module = sys.modules.get("torch.fx.node")
    node_type = getattr(node_module, "Node", None)
    if node_type is None or not isinstance(node, node_type):
        raise TypeError(f"callsite.torch.traceback_of: node must be a torch.fx.Node, not "
                        f"{type(node).__module__}.{type(node).__qualname__}")
    return _tracebacks.get(node)


def status() -> dict[str, Any]:
    """For ``python -m callsite doctor``: whether torch.fx's stack traces are callsite's, the
    switch, and why not. Imports nothing (torch's version is read from its metadata until
    torch is imported)."""
    try:
        switch_value(os.environ)
        switch_error = None
    except ValueError as error:
        switch_error = str(error)
    waiting = any(isinstance(finder, ProxyImportWatcher) for finder in sys.meta_path)
    if _state is not None:
        summary = "on: torch.fx's node stack traces are built by callsite"
    elif _refusal is not None:
        summary = f"off: torch's own stack traces kept ({_refusal})"
    elif switch_error is not None:
        summary = f"off: {switch_error}"
    elif waiting:
        summary = f"on once torch.fx is imported ({VARIABLE}=1)"
    else:
        summary = f"off ({VARIABLE}=1 or callsite.torch.accelerate() turns it on)"
    return {
        "status": summary,
        "accelerated": _state is not None,
        VARIABLE: os.environ.get(VARIABLE),
        "waiting_for_torch_fx": waiting,
        "torch": _torch_version(),
        "refusal": _refusal,
        "checked_versions": list(CHECKED_VERSIONS),
        "cached_texts": len(_caches.texts),
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


def accelerate_from_environment() -> None:
    """The CALLSITE_TORCH start-up hook: accelerate once torch.fx.proxy is imported."""
    if switch_value(os.environ):
        when_proxy_imported(_install)
