"""PyTorch graph stack traces served by callsite.

After :func:`accelerate` (or with ``CALLSITE_TORCH=1`` in the environment), every
``node.stack_trace`` that ``torch.fx``'s ``TracerBase.create_node`` records (``fx.Tracer`` with
``record_stack_traces``, ``make_fx(record_stack_traces=True)``, export's tracers) comes from a
raw callsite capture instead of torch's symbolized walk. The text is torch's own, byte for
byte: torch's filter decisions, made once per file and function name, and torch's formatting
(``traceback.StackSummary.format``), done once per distinct raw stack and checked against the
copy of each source file ``linecache`` holds. A tracer whose class overrides
``_filter_traceback_frames`` gets its override called with a ``StackSummary`` of the same
frames torch would have given it.

torch's code is recognised by structure (``callsite.torch._recognise``); where it differs,
:func:`accelerate` warns once and torch keeps its own path.

No finalizer of this module runs Python code: a weak-reference callback or ``__del__`` runs
wherever a collection happens (inside a lock this module holds, or with a KeyboardInterrupt
pending, which it would swallow). What must die with the tracers is freed by reference
counting alone (see :class:`_Generation`).
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
from collections.abc import Callable
from types import ModuleType
from typing import Any

from .._callsite import Traceback, capture
from .._switches import BY_INTEGRATION
from .._warnings import CallsiteWarning
from . import _detect
from ._detect import CHECKED_VERSIONS

_SWITCH = BY_INTEGRATION["torch"]
VARIABLE = _SWITCH.variable

# torch's modules are imported by name (importlib), never by an import statement: a type
# checker in a user's environment without torch would report them missing in callsite's code.

__all__ = ["CHECKED_VERSIONS", "TorchWarning", "accelerate", "decelerate", "is_accelerated",
           "status", "traceback_of", "clear_caches"]


class TorchWarning(CallsiteWarning, RuntimeWarning):
    """torch's stack-trace code is not what callsite reproduces: torch's own path stays."""


#: The node.meta key of a node's capture (a _Recorded). torch.fx.proxy._COPY_META_FIELDS lists
#: it while callsite is on, so metadata torch preserves from node to node carries it.
_META_KEY = "_callsite_traceback"


class _State:
    """What one accelerate() installed."""

    def __init__(self, tracer_base: type, original: Any, default_filter: Any, installed: Any,
                 copied_fields: list[str] | None) -> None:
        self.tracer_base = tracer_base
        self.original_create_node = original
        self.default_filter = default_filter
        self.installed = installed
        #: torch.fx.proxy._COPY_META_FIELDS when accelerate() added _META_KEY to it.
        self.copied_fields = copied_fields


_state: _State | None = None
#: Whether node.stack_trace = text is the meta write alone (checked at install): Node's
#: __setattr__ would otherwise cost more than the rest of the recording per node.
_meta_write = False
_refusal: str | None = None
#: Held by accelerate(), decelerate(), clear_caches() and the rare updates of shared tables,
#: never across torch's source being read or imported. Re-entrant: a collection inside a held
#: region may run some object's __del__ that calls back into this module.
_lock = threading.RLock()


class _Recorded(tuple):  # type: ignore[type-arg]
    """``node.meta[_META_KEY]``: (the node's raw Traceback, the stack_trace text recorded with
    it). It goes wherever torch copies the node's metadata (a dict copy, ``copy.copy`` and
    ``copy.deepcopy`` give this same immutable object); pickled, it becomes None, since a capture
    is of this process's code objects."""

    __slots__ = ()

    def __copy__(self) -> _Recorded:
        return self

    def __deepcopy__(self, memo: Any) -> _Recorded:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(None), ())


def _dead_ref() -> None:
    return None


class _Bounded:
    """A cache of strings bounded by an estimate of its bytes: past the bound it starts over
    (a program whose stacks never repeat)."""

    __slots__ = ("entries", "size", "limit")

    def __init__(self, limit: int) -> None:
        self.entries: dict[Any, Any] = {}
        self.size = 0
        self.limit = limit

    def put(self, key: Any, value: Any, size: int) -> None:
        if self.size + size > self.limit:
            self.entries.clear()
            self.size = 0
        self.entries[key] = value
        self.size += size

    def clear(self) -> None:
        self.entries.clear()
        self.size = 0


#: Estimated bytes of a key's frame (three references and a tuple) beside the text's characters.
_FRAME_KEY_BYTES = 100
_STACK_TEXTS_BYTES = 1 << 24
_FRAME_TEXTS_BYTES = 1 << 22


class _Rules:
    """torch's filter rules, published as one object once complete (a thread recording its
    first node sees either no rules or all of them): the modules they are read from,
    uninteresting_files() and the registered anchors; and what depends on them alone, as
    strings that outlive tracers: the filter decisions by (file, function name), and the
    texts by the stack they were made from."""

    __slots__ = ("proxy", "symbolic_shapes", "function", "uninteresting", "anchors",
                 "decisions", "stack_texts")

    def __init__(self, proxy: ModuleType, symbolic_shapes: ModuleType, function: Any,
                 uninteresting: frozenset[str], anchors: frozenset[tuple[str, str]],
                 same_as: _Rules | None) -> None:
        self.proxy = proxy
        self.symbolic_shapes = symbolic_shapes
        self.function = function
        self.uninteresting = uninteresting
        self.anchors = anchors
        #: (file, function name) -> (named forward, kept by forward-only mode, not an
        #: uninteresting file).
        self.decisions: dict[tuple[str, str], tuple[bool, bool, bool]] = \
            same_as.decisions if same_as is not None else {}
        #: (mode, then (file, line, name) per frame, outermost first) -> (text, its checks).
        self.stack_texts: _Bounded = same_as.stack_texts if same_as is not None \
            else _Bounded(_STACK_TEXTS_BYTES)


_rules: _Rules | None = None


def _load_rules(previous: _Rules | None) -> _Rules:
    """Reads torch's rules (importing what torch's filter imports) and publishes them. An
    exception (a KeyboardInterrupt during the import) publishes nothing: the next node tries
    again, as torch's own filter would."""
    global _rules
    proxy = importlib.import_module("torch.fx.proxy")
    symbolic_shapes = importlib.import_module("torch.fx.experimental.symbolic_shapes")
    function = symbolic_shapes.uninteresting_files
    anchors = frozenset(proxy._STACK_TRACE_ANCHORS)
    uninteresting = frozenset(function())
    same = previous is not None and previous.uninteresting == uninteresting \
        and previous.anchors == anchors
    rules = _Rules(proxy, symbolic_shapes, function, uninteresting, anchors,
                   previous if same else None)
    _rules = rules
    return rules


class _Generation:
    """The texts looked up by raw stack (their Traceback keys hold code objects), made under
    one _Rules. It lives exactly while a tracer registered with it is alive: see
    _TracerRef."""

    __slots__ = ("rules", "texts", "ref", "tracers", "tracers_pruned_at", "__weakref__")

    def __init__(self, rules: _Rules) -> None:
        self.rules = rules
        #: (Traceback, forward-only mode) -> (text, checks, _Recorded).
        self.texts: dict[tuple[Traceback, bool], tuple[str | None, Any, _Recorded]] = {}
        self.ref = weakref.ref(self)
        #: id(tracer) -> weakref.ref(tracer): the tracers registered (dead ones pruned).
        self.tracers: dict[int, Any] = {}
        self.tracers_pruned_at = 64


class _TracerRef(weakref.ref):  # type: ignore[type-arg]
    """A registered tracer's weak reference, holding the generation serving it. It is held by
    _tracer_refs alone, and its callback is that set's ``discard`` (a method of C): when the
    tracer dies, CPython calls it (a collection too) and the reference, then the generation
    once no other tracer's reference holds it, are freed by reference counting. No Python code
    runs as a finalizer."""

    __slots__ = ("generation",)
    generation: _Generation


#: Past this many entries, a generation's texts start over.
_TEXTS_MAX = 1 << 16

_generation_ref: Callable[[], _Generation | None] = _dead_ref
#: Weak references to every generation made (to clear them all); pruned as they die.
_generations: list[Any] = []
#: The registered tracers' references (each hashed while its tracer is alive).
_tracer_refs: set[_TracerRef] = set()
#: Generations serving a tracer that cannot be weakly referenced or hashed: held until
#: clear_caches().
_pinned: list[_Generation] = []


def _generation_for(tracer: Any, rules: _Rules) -> _Generation:
    """The current generation (a new one when there is none alive, or it was made under other
    rules), with `tracer` registered to hold it."""
    global _generation_ref
    generation = _generation_ref()
    if generation is None or generation.rules is not rules:
        if generation is not None:  # made under other rules: its tracers may hold it still
            generation.texts.clear()
        generation = _Generation(rules)
        _generation_ref = generation.ref
        with _lock:
            _generations[:] = [ref for ref in _generations if ref() is not None]
            _generations.append(generation.ref)
    key = id(tracer)
    known = generation.tracers.get(key)
    if known is not None and known() is tracer:
        return generation
    try:
        plain = weakref.ref(tracer)
        ref = _TracerRef(tracer, _tracer_refs.discard)
        ref.generation = generation
        _tracer_refs.add(ref)  # hashes the tracer (which may run its __hash__)
    except TypeError:  # not weak-referenceable, or not hashable: held until clear_caches()
        with _lock:
            if not any(pinned is generation for pinned in _pinned):
                _pinned.append(generation)
        return generation
    with _lock:
        tracers = generation.tracers
        tracers[key] = plain
        if len(tracers) > generation.tracers_pruned_at:
            for dead in [k for k, r in tracers.items() if r() is None]:
                del tracers[dead]
            generation.tracers_pruned_at = max(64, 2 * len(tracers))
    return generation


#: (weak reference to the tracer of the previous node, whether its class overrides the filter,
#: weak reference to the generation serving it): one tuple, so that a thread never reads one
#: tracer's reference with another's flag.
_NO_TRACER: tuple[Any, bool, Any] = (_dead_ref, True, _dead_ref)
_current = _NO_TRACER


def _new_tracer(tracer: Any) -> tuple[bool, _Generation | None]:
    """A node from a tracer other than the previous node's: whether its class overrides
    _filter_traceback_frames, and else the generation serving it."""
    global _current
    state = _state
    try:
        ref: Any = weakref.ref(tracer)
    except TypeError:
        ref = _dead_ref
    if state is None or type(tracer)._filter_traceback_frames is not state.default_filter:
        _current = (ref, True, _dead_ref)
        return True, None
    rules = _rules
    if rules is None:
        rules = _load_rules(None)
    generation = _generation_for(tracer, rules)
    _current = (ref, False, generation.ref)
    return False, generation


# --- linecache's copies of the source files ------------------------------------------------

#: file -> (the linecache entry last seen for it, its fingerprint, estimated bytes): the entry
#: is held only to know, by identity, that linecache still has it; bounded by bytes, since an
#: entry held here after linecache let go of it keeps the file's lines in memory.
_files: dict[str, tuple[Any, Any, int]] = {}
_files_size = 0
_FILES_BYTES = 1 << 23
#: Estimated bytes per line of a linecache entry beyond its characters (the str and the list).
_LINE_BYTES = 64


def _fingerprint(name: str) -> Any:
    """What identifies linecache's copy of file `name`, which torch's walk reads every line
    from: None when there is none; else its size, modification time, full name and a hash of
    its lines (a copy read again with the same lines has the same fingerprint). A file not read
    yet is read, as torch's walk reads it."""
    global _files_size
    cache = linecache.cache
    entry = cache.get(name)
    known = _files.get(name)
    if known is not None and known[0] is entry:
        return known[1]
    if entry is None or len(entry) == 1:  # not read, or registered lazily
        linecache.getlines(name)
        entry = cache.get(name)
        if known is not None and known[0] is entry:
            return known[1]
    fingerprint: Any = None
    size = 0
    if entry is not None and len(entry) != 1:
        try:
            length, mtime, lines, fullname = entry
            fingerprint = (length, mtime, fullname, len(lines), hash(tuple(lines)))
            size = (length if isinstance(length, int) else 0) + _LINE_BYTES * len(lines)
        except Exception:  # not linecache's shape: a fingerprint equal to no other
            fingerprint = object()
    with _lock:
        old = _files.pop(name, None)
        if old is not None:
            _files_size -= old[2]
        while _files and _files_size + size > _FILES_BYTES:
            _files_size -= _files.pop(next(iter(_files)))[2]
        _files[name] = (entry, fingerprint, size)
        _files_size += size
    return fingerprint


def _checks(frames: list[tuple[str, int | None, str]]) -> tuple[tuple[str, Any], ...]:
    """(file, fingerprint) for each distinct file of `frames`."""
    return tuple([(name, _fingerprint(name)) for name in dict.fromkeys([f[0] for f in frames])])


def _unchanged(checks: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...] | None:
    """`checks` when linecache still holds the same copies of their files (with the current
    fingerprint objects, so that a later check is by identity), else None."""
    same = True
    for name, fingerprint in checks:
        now = _fingerprint(name)
        if now is not fingerprint:
            if now != fingerprint:
                return None
            same = False
    if same:
        return checks
    return tuple((name, _fingerprint(name)) for name, _ in checks)


# --- texts -----------------------------------------------------------------------------------

def _decision(rules: _Rules, filename: str, name: str) -> tuple[bool, bool, bool]:
    """(named forward, kept by forward-only mode, not an uninteresting file): torch's filter
    reads only a frame's file and function name."""
    key = (filename, name)
    found = rules.decisions.get(key)
    if found is None:
        forward = name == "forward"
        found = (forward,
                 forward or filename.endswith("torch/__init__.py") or key in rules.anchors,
                 filename not in rules.uninteresting)
        rules.decisions[key] = found
    return found


def _frames(tb: Traceback) -> list[tuple[str, int | None, str]]:
    """Python frames outermost first as torch's walk gives them: (file, line, name)."""
    frames = []
    for frame in reversed(tb.frames):
        code = frame.code
        if code is None:  # a native frame: torch's walk does not see it
            continue
        frames.append((code.co_filename, frame.lineno, code.co_name))
    return frames


def _kept(rules: _Rules, frames: list[tuple[str, int | None, str]],
          forward_only: bool) -> list[tuple[str, int | None, str]]:
    """The frames torch's default filter keeps (outermost first)."""
    if forward_only:
        kept = [frame for frame in frames if _decision(rules, frame[0], frame[2])[1]]
    else:
        kept = []
        for i, frame in enumerate(frames):
            if _decision(rules, frame[0], frame[2])[0]:
                kept = frames[i:]
                break
    return [frame for frame in kept if _decision(rules, frame[0], frame[2])[2]]


#: A frame's formatted lines, keyed by what StackSummary.format_frame_summary reads (file, line
#: number, name, its keyword arguments), with the fingerprint of the file they were read from:
#: strings only, so they outlive tracers (most frames recur in every graph a program traces).
_frame_texts = _Bounded(_FRAME_TEXTS_BYTES)


if sys.version_info >= (3, 11):
    class _FormattedOnce(_traceback.StackSummary):
        """StackSummary.format as CPython writes it (its order, its repetition cut-off), each
        frame's own lines formatted once."""

        def format_frame_summary(self, frame_summary: Any, **kwargs: Any) -> str:
            key = (frame_summary.filename, frame_summary.lineno, frame_summary.name,
                   *kwargs.items())
            # Taken before the format reads the file: a copy changed in between is not trusted.
            known = _files.get(frame_summary.filename)
            if known is not None and known[0] is linecache.cache.get(frame_summary.filename):
                fingerprint = known[1]
            else:
                fingerprint = _fingerprint(frame_summary.filename)
            found = _frame_texts.entries.get(key)
            if found is not None and found[1] == fingerprint:
                cached: str = found[0]
                return cached
            text: str = super().format_frame_summary(frame_summary, **kwargs)
            _frame_texts.put(key, (text, fingerprint), len(text) + _FRAME_KEY_BYTES)
            return text
else:  # 3.10's StackSummary.format formats each frame inline, with no method to serve
    _FormattedOnce = _traceback.StackSummary


def _summary(frames: list[tuple[str, int | None, str]],
             kind: type[_traceback.StackSummary] = _traceback.StackSummary,
             ) -> _traceback.StackSummary:
    stack = kind()
    for filename, lineno, name in frames:
        stack.append(_traceback.FrameSummary(filename, lineno, name, lookup_line=False))
    return stack


def _stack_text(tb: Traceback, forward_only: bool,
                rules: _Rules) -> tuple[str | None, Any, _Recorded]:
    """The text of torch's default filter for `tb`, from the texts kept as strings when
    linecache holds the same copies of its files, else formatted."""
    frames = _frames(tb)
    key = (forward_only, *frames)
    found = rules.stack_texts.entries.get(key)
    checks = None
    if found is not None:
        text, stored = found
        checks = _unchanged(stored)
        if checks is not None and checks is not stored:  # equal copies, read again
            rules.stack_texts.entries[key] = (text, checks)
    if checks is None:
        kept = _kept(rules, frames, forward_only)
        # Taken before the format reads the files: a copy changed in between is not trusted.
        checks = _checks(kept)
        text = "".join(_summary(kept, _FormattedOnce).format()).strip() if kept else None
        rules.stack_texts.put(key, (text, checks),
                              len(text or "") + _FRAME_KEY_BYTES * len(key))
    return text, checks, _Recorded((tb, text))


def _record_stack_trace(tracer: Any, node: Any) -> None:
    """The recording block of TracerBase.create_node, served by callsite."""
    tb = capture(1)  # innermost: create_node, as torch's walk without extract's frame
    ref, overrides, generation_ref = _current
    if ref() is not tracer:
        overrides, generation = _new_tracer(tracer)
    else:
        generation = generation_ref()
    if overrides:
        _record_through_override(tracer, node, tb)
        return
    if generation is None:  # its holders were let go of (clear_caches, decelerate)
        generation = _new_tracer(tracer)[1]
        assert generation is not None
    rules = generation.rules
    if rules.symbolic_shapes.uninteresting_files is not rules.function \
            or rules.proxy._STACK_TRACE_ANCHORS != rules.anchors:
        _load_rules(rules)
        generation = _new_tracer(tracer)[1]
        assert generation is not None
        rules = generation.rules
    forward_only = tracer._record_forward_stack_traces_only
    key = (tb, forward_only)
    found = generation.texts.get(key)
    if found is not None:
        files, cache = _files, linecache.cache
        for name, fingerprint in found[1]:
            known = files.get(name)
            if known is None or known[0] is not cache.get(name) or known[1] is not fingerprint:
                found = None
                break
    if found is None:
        found = _stack_text(tb, forward_only, rules)
        texts = generation.texts
        if len(texts) >= _TEXTS_MAX:
            texts.clear()
        texts[key] = found
    text = found[0]
    if text:
        if _meta_write:
            node.meta["stack_trace"] = text
        else:
            node.stack_trace = text
    node.meta[_META_KEY] = found[2]


def _record_through_override(tracer: Any, node: Any, tb: Traceback) -> None:
    """torch's recording block with callsite's frames: the tracer's own filter is called with
    the StackSummary torch's walk would have given it."""
    summary = _summary(_frames(tb))
    text = None
    if summary:
        summary = tracer._filter_traceback_frames(summary)
        if summary:
            text = "".join(summary.format()).strip()
            node.stack_trace = text
    node.meta[_META_KEY] = _Recorded((tb, text))


# --- switching -------------------------------------------------------------------------------

def _install(proxy: ModuleType) -> None:
    global _state, _refusal, _meta_write
    # ast and inspect: imported when torch.fx is, not by `python -m callsite doctor`.
    from . import _recognise as recognise

    for _ in range(3):  # again if create_node is replaced while its source is read
        if _state is not None:
            return
        # torch's source is read and parsed with no lock held: a collection there may run any
        # object's __del__, which may call this module.
        try:
            torch_traceback = importlib.import_module("torch.utils._traceback")

            tracer_base = proxy.TracerBase
            original = vars(tracer_base).get("create_node")
            default_filter = recognise.check_default_filter(tracer_base)
            recognise.check_symbolization(torch_traceback)
            if proxy.CapturedTraceback is not torch_traceback.CapturedTraceback:
                raise recognise.Unrecognised("torch.fx.proxy.CapturedTraceback is not "
                                             "torch.utils._traceback's")
            rebuilt = recognise.rebuilt_create_node(tracer_base, proxy, _record_stack_trace)
            node_type = importlib.import_module("torch.fx.node").Node
            meta_write = recognise.stack_trace_setter_is_meta_write(node_type)
        except recognise.Unrecognised as error:
            with _lock:
                if _state is not None:
                    return
                _refusal = str(error)
            warnings.warn(f"callsite.torch: torch's own stack traces kept: {error} (callsite "
                          f"checked torch {', '.join(CHECKED_VERSIONS)})", TorchWarning,
                          stacklevel=3)
            return
        with _lock:
            if _state is not None:
                return
            if vars(tracer_base).get("create_node") is not original:
                continue
            fields = getattr(proxy, "_COPY_META_FIELDS", None)
            copied = None
            if isinstance(fields, list) and _META_KEY not in fields:
                fields.append(_META_KEY)
                copied = fields
            _meta_write = meta_write
            tracer_base.create_node = rebuilt
            _state = _State(tracer_base, original, default_filter, rebuilt, copied)
            _refusal = None
            return
    with _lock:
        _refusal = "TracerBase.create_node was replaced while callsite read it"
    warnings.warn(f"callsite.torch: torch's own stack traces kept: {_refusal}", TorchWarning,
                  stacklevel=3)


def _start_up_accelerate(proxy: ModuleType) -> None:
    """The start-up hook's call (CALLSITE_TORCH on) once torch.fx.proxy is imported."""
    _install(proxy)


def accelerate() -> bool:
    """Serves torch.fx's node stack traces with callsite (idempotent). Imports torch.fx.
    Returns False (after one TorchWarning) where torch's code is not recognised."""
    _install(importlib.import_module("torch.fx.proxy"))
    return _state is not None


def _clear_generations() -> None:
    """Empties every live generation's texts (the code objects they hold) and lets go of the
    pinned ones; the tracers' registrations stay."""
    global _current
    _current = _NO_TRACER
    for ref in list(_generations):
        generation = ref()
        if generation is not None:
            generation.texts.clear()
    _pinned.clear()


def decelerate() -> bool:
    """Back to torch's own create_node (False: it was not accelerated)."""
    global _state
    with _lock:
        state = _state
        if state is None:
            return False
        if vars(state.tracer_base).get("create_node") is state.installed:
            setattr(state.tracer_base, "create_node", state.original_create_node)
        if state.copied_fields is not None and _META_KEY in state.copied_fields:
            state.copied_fields.remove(_META_KEY)
        _state = None
        _clear_generations()
        return True


def is_accelerated() -> bool:
    return _state is not None


def clear_caches() -> None:
    """Drops the cached texts (and the code objects they hold), the filter decisions, each
    frame's formatted lines and what is kept of linecache's copies."""
    global _files_size
    with _lock:
        _clear_generations()
        rules = _rules
        if rules is not None:
            rules.stack_texts.clear()
            rules.decisions.clear()
        _frame_texts.clear()
        _files.clear()
        _files_size = 0


def traceback_of(node: Any) -> Traceback | None:
    """The raw callsite Traceback (innermost first) captured when `node` (a ``torch.fx.Node``)
    was recorded under accelerate(), or when the node it was made from was (torch's passes copy
    a node's metadata, and this capture with it); None for a node whose ``stack_trace`` is not
    the text recorded with a capture. ``callsite.mlir`` renders it as an MLIR location with
    columns: ``callsite.mlir.location(traceback_of(node), filter=...)`` or ``.to_mlir(filter)``.
    Raises TypeError for anything that is not a torch.fx.Node."""
    # A Node exists only once torch.fx.node is imported: looked up, never imported here.
    node_module = sys.modules.get("torch.fx.node")
    node_type = getattr(node_module, "Node", None)
    if node_type is None or not isinstance(node, node_type):
        raise TypeError(f"callsite.torch.traceback_of: node must be a torch.fx.Node, not "
                        f"{type(node).__module__}.{type(node).__qualname__}")
    meta = getattr(node, "meta", None)
    if not isinstance(meta, dict):
        return None
    recorded = meta.get(_META_KEY)
    if type(recorded) is not _Recorded or len(recorded) != 2:
        return None
    tb, text = recorded
    # The capture describes the node while its text is the one recorded with it (a pass that
    # copies the metadata but drops or rewrites the text leaves a node it does not describe).
    if meta.get("stack_trace") != text:
        return None
    return tb  # type: ignore[no-any-return]


def status() -> dict[str, Any]:
    """For ``python -m callsite doctor``: whether torch.fx's stack traces are callsite's, the
    switch, and why not. Imports nothing (torch's version is read from its metadata until
    torch is imported)."""
    try:
        _SWITCH.parse(os.environ.get(VARIABLE))
        switch = None
    except ValueError as error:
        switch = str(error)
    waiting = _detect.waiting()
    if _state is not None:
        summary = "on: torch.fx's node stack traces are built by callsite"
    elif _refusal is not None:
        summary = f"off: torch's own stack traces kept ({_refusal})"
    elif switch is not None:
        summary = f"off: {switch}"
    elif waiting:
        summary = f"on once torch.fx is imported ({VARIABLE}=1)"
    else:
        summary = f"off ({VARIABLE}=1 or callsite.torch.accelerate() turns it on)"
    cached = 0
    for ref in list(_generations):
        generation = ref()
        if generation is not None:
            cached += len(generation.texts)
    return {
        "status": summary,
        "accelerated": _state is not None,
        VARIABLE: os.environ.get(VARIABLE),
        "waiting_for_torch_fx": waiting,
        "torch": _torch_version(),
        "refusal": _refusal,
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
