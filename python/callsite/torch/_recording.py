"""What callsite.torch installs in torch.fx and the recording it serves there: the state of
accelerate(), torch's filter rules and the native recorder made for them, the frames() scope,
and the recording block of TracerBase.create_node (the native path, and the Python path for
what it does not describe). callsite.torch, the API, reads this state and sets ``_chosen``
for a frames() scope; everything else here is written by this module alone.

No finalizer of this module runs Python code: a weak-reference callback or ``__del__`` runs
wherever a collection happens (inside a lock this module holds, or with a KeyboardInterrupt
pending, which it would swallow). Nothing cached refers to a tracer, a graph or a code object:
the tables hold strings and linecache's entries.
"""
from __future__ import annotations

import contextvars
import importlib
import linecache
import threading
from types import FunctionType, ModuleType
from typing import Any

from .._callsite import Filter, Traceback, _TorchTexts, capture
from ._detect import CHECKED_VERSIONS

# torch's modules are imported by name (importlib), never by an import statement: a type
# checker in a user's environment without torch would report them missing in callsite's code.


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


class _Rules:
    """torch's filter rules, published as one object once complete (a thread recording its
    first node sees either no rules or all of them): the modules they are read from,
    uninteresting_files() and the registered anchors; and the native recorder made for them
    (its filter decisions by (file, function name) are these rules', for the Python path too;
    the texts it serves are process-wide strings, whatever the rules)."""

    __slots__ = ("proxy", "symbolic_shapes", "function", "uninteresting", "anchors", "texts")

    def __init__(self, proxy: ModuleType, symbolic_shapes: ModuleType, function: Any,
                 uninteresting: frozenset[str], anchors: frozenset[tuple[str, str]],
                 same_as: _Rules | None) -> None:
        self.proxy = proxy
        self.symbolic_shapes = symbolic_shapes
        self.function = function
        self.uninteresting = uninteresting
        self.anchors = anchors
        self.texts: Any = same_as.texts if same_as is not None else _TorchTexts(
            uninteresting, anchors, _Recorded)


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


#: The Filter of the innermost callsite.torch.frames() scope open in this thread or asyncio
#: task (None: torch's own rules).
_chosen: contextvars.ContextVar[Filter | None] = contextvars.ContextVar(
    "callsite.torch.frames", default=None)


def _whole_stack() -> Traceback:
    """The stack of this function's caller's caller (create_node's frame innermost), whole, as
    torch's walk sees it: a kernel boundary open around the trace (callsite.boundary, an MLIR
    scope's) is a context variable that would end the capture at its kernel, so the capture
    runs in a new, empty context."""
    return contextvars.Context().run(capture, 2)


def _linecache_own(function: Any) -> Any:
    """`function` if it is linecache's own (defined in linecache's namespace), else None."""
    if isinstance(function, FunctionType) and function.__globals__ is vars(linecache):
        return function
    return None


#: linecache's own readers. torch's text quotes each frame's line through
#: linecache.getline (traceback.FrameSummary.line), which reads linecache.getlines: while
#: either is replaced (doctest, IPython, a redacting tool), the text follows the replacement,
#: so the native tables, which read linecache.cache, are not used.
_GETLINE = _linecache_own(linecache.getline)
_GETLINES = _linecache_own(linecache.getlines)


def _linecache_replaced() -> bool:
    return linecache.getline is not _GETLINE or linecache.getlines is not _GETLINES


# --- the Python path: a tracer's own filter, native frames -----------------------------------

#: An exact str with the characters of a str or str subclass, without calling the subclass's
#: methods (str.__str__ copies a subclass, returns an exact str itself).
_exact_str = str.__str__


def _frames(tb: Traceback) -> list[tuple[str, int | None, str]]:
    """Python frames outermost first as torch's walk gives them: (file, line, name). torch's
    symbolizer reads co_filename and co_name into C++ strings, so its FrameSummary holds exact
    strs even for a code object whose names are str subclasses (whose startswith/endswith
    linecache and torch's filter would otherwise call)."""
    frames = []
    for frame in reversed(tb.frames):
        code = frame.code
        if code is None:  # a native frame: torch's walk does not see it
            continue
        frames.append((_exact_str(code.co_filename), frame.lineno, _exact_str(code.co_name)))
    return frames


def _kept(rules: _Rules, frames: list[tuple[str, int | None, str]],
          forward_only: bool) -> list[tuple[str, int | None, str]]:
    """The frames torch's default filter keeps (outermost first): the native recorder's
    decisions, the one place torch's rules are written."""
    kept: list[tuple[str, int | None, str]] = rules.texts.kept(frames, forward_only)
    return kept


def _record_stack_trace(tracer: Any, node: Any) -> None:
    """The recording block of TracerBase.create_node, served by callsite: one native call per
    node (_TorchTexts.record captures the stack without this frame, as capture(1) here)."""
    state = _state
    if state is None or type(tracer)._filter_traceback_frames is not state.default_filter:
        _record_through_override(tracer, node, _whole_stack())
        return
    rules = _rules
    if rules is None or rules.symbolic_shapes.uninteresting_files is not rules.function \
            or rules.proxy._STACK_TRACE_ANCHORS != rules.anchors:
        rules = _load_rules(rules)
    chosen = _chosen.get()
    if chosen is not None:
        _record_chosen(rules, node, capture(1, filter=chosen))
        return
    forward_only = tracer._record_forward_stack_traces_only
    if _linecache_replaced():
        _record_in_python(rules, node, _whole_stack(), forward_only)
        return
    if _meta_write:
        recorded = rules.texts.record(node.meta, forward_only)
        if type(recorded) is _Recorded:
            return
    else:
        recorded = rules.texts.record(None, forward_only)
        if type(recorded) is _Recorded:
            _store(node, recorded)
            return
    _record_in_python(rules, node, recorded, forward_only)


def _record_chosen(rules: _Rules, node: Any, tb: Traceback) -> None:
    """A node recorded under frames(): `tb` holds the frames the scope's Filter keeps."""
    if not _linecache_replaced():
        recorded = rules.texts.record_kept(node.meta if _meta_write else None, tb)
        if type(recorded) is _Recorded:
            if not _meta_write:
                _store(node, recorded)
            return
    frames = _frames(tb)
    _store(node, _Recorded((tb, _TorchTexts.text(frames) if frames else None)))


def _store(node: Any, recorded: _Recorded) -> None:
    """Writes a recording's text (when there is one) and the recording to the node."""
    text = recorded[1]
    if text:
        if _meta_write:
            node.meta["stack_trace"] = text
        else:
            node.stack_trace = text
    node.meta[_META_KEY] = recorded


def _record_in_python(rules: _Rules, node: Any, tb: Traceback, forward_only: bool) -> None:
    """The default filter's recording in Python, for a stack the native recorder does not
    describe (a native frame, a name that is a str subclass, a frame without a line) or while
    linecache's readers are replaced."""
    kept = _kept(rules, _frames(tb), forward_only)
    _store(node, _Recorded((tb, _TorchTexts.text(kept) if kept else None)))


def _record_through_override(tracer: Any, node: Any, tb: Traceback) -> None:
    """torch's recording block with callsite's frames: the tracer's own filter is called with
    the StackSummary torch's walk would have given it."""
    summary = _TorchTexts.summary(_frames(tb))
    text = None
    if summary:
        summary = tracer._filter_traceback_frames(summary)
        if summary:
            text = "".join(summary.format()).strip()
            node.stack_trace = text
    node.meta[_META_KEY] = _Recorded((tb, text))


# --- installing --------------------------------------------------------------------------------

def _install(proxy: ModuleType) -> str | None:
    """Installs the recording in TracerBase.create_node unless installed. Returns the message
    of the TorchWarning the caller issues when torch's code is not recognised, else None."""
    global _state, _refusal, _meta_write
    # ast and inspect: imported when torch.fx is, not by `python -m callsite doctor`.
    from . import _recognise as recognise

    for _ in range(3):  # again if create_node is replaced while its source is read
        if _state is not None:
            return None
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
                    return None
                _refusal = str(error)
            return (f"callsite.torch: torch's own stack traces kept: {error} (callsite checked "
                    f"torch {', '.join(CHECKED_VERSIONS)})")
        with _lock:
            if _state is not None:
                return None
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
            return None
    with _lock:
        _refusal = "TracerBase.create_node was replaced while callsite read it"
    return f"callsite.torch: torch's own stack traces kept: {_refusal}"


def _uninstall() -> bool:
    """decelerate(): torch's own create_node back (False: it was not installed)."""
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
        return True


def _clear() -> None:
    """clear_caches(): the recorder's decisions and raw stacks, and the process-wide tables."""
    with _lock:
        rules = _rules
        if rules is not None:
            rules.texts.clear()
        _TorchTexts.clear_tables()


# --- reading a node's recording ---------------------------------------------------------------

def _capture_for(meta: Any, text: Any) -> Traceback | None:
    """The capture in `meta` if it was recorded with `text`: a capture describes its node while
    the node's text is the one recorded with it (a pass that copies the metadata but drops or
    rewrites the text leaves a node it does not describe)."""
    if not isinstance(meta, dict):
        return None
    recorded = meta.get(_META_KEY)
    if type(recorded) is not _Recorded or len(recorded) != 2:
        return None
    tb, recorded_text = recorded
    if meta.get("stack_trace") != text or recorded_text != text:
        return None
    return tb  # type: ignore[no-any-return]


def _step(node: Any, direction: str) -> Any:
    """The node before or after `node` in its graph, None past either end (torch.fx's graph is
    a ring through a sentinel node whose op is "root")."""
    if node is None:
        return None
    neighbour = getattr(node, direction, None)
    if neighbour is None or getattr(neighbour, "op", "root") == "root":
        return None
    return neighbour
