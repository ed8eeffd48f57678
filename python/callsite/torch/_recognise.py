"""Recognising torch's stack-trace recording by its structure, not its version string.

callsite serves ``TracerBase.create_node``'s stack trace only where torch's code is exactly
the shape whose output callsite reproduces: the recording block in ``create_node``, the default
``_filter_traceback_frames`` and the symbolization in ``torch.utils._traceback``. Each is
compared as an AST (names, calls, constants; no line numbers or comments) against the shape
below. ``create_node`` itself is rebuilt from torch's own source with only the recording block
replaced, so everything else it does in this torch version stays torch's.
"""
from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from types import FunctionType, ModuleType
from typing import Any

from ._detect import CHECKED_VERSIONS  # noqa: F401  (listed in the warnings)

#: The recording block of TracerBase.create_node (its test, then its body).
RECORDING_TEST = "self.record_stack_traces and not node.stack_trace"
RECORDING_BODY = '''
user_stack_summary = CapturedTraceback.extract().summary()
if user_stack_summary:
    user_stack_summary = self._filter_traceback_frames(user_stack_summary)
    if user_stack_summary:
        node.stack_trace = "".join(user_stack_summary.format()).strip()
'''

#: The body of TracerBase._filter_traceback_frames that callsite's cached filter reproduces.
DEFAULT_FILTER_BODY = '''
user_frames: list[traceback.FrameSummary] = []
if self._record_forward_stack_traces_only:
    user_frames = [
        frame
        for frame in user_stack_summary
        if (
            frame.name == "forward"
            or frame.filename.endswith("torch/__init__.py")
            or (frame.filename, frame.name) in _STACK_TRACE_ANCHORS
        )
    ]
else:
    first_forward = -1
    for i, frame in enumerate(user_stack_summary):
        if frame.name == "forward":
            user_frames = user_stack_summary[i:]
            first_forward = i
            break
    if first_forward == -1:
        user_frames: list[traceback.FrameSummary] = []
from torch.fx.experimental.symbolic_shapes import uninteresting_files
user_frames = [
    frame
    for frame in user_frames
    if frame.filename not in uninteresting_files()
]
return traceback.StackSummary.from_list(user_frames)
'''

#: CapturedTraceback's frames: outermost first, FrameSummary(filename, line, name), with
#: the innermost `skip` entries (extract's own frame) dropped.
SYMBOLIZED_BODY = '''
stack = traceback.StackSummary()
for f in reversed(tb[skip:]):
    stack.append(traceback.FrameSummary(f["filename"], f["line"], f["name"]))
return stack
'''
EXTRACT_RETURN = '''
return CapturedTraceback(
    torch._C._profiler.gather_traceback(python=True, script=script, cpp=cpp),
    0 if script or cpp else skip + 1,
)
'''


class Unrecognised(Exception):
    """torch's code is not the shape callsite reproduces (the message says where)."""


def _shape(nodes: list[ast.stmt] | ast.AST) -> str:
    if isinstance(nodes, list):
        return "\n".join(ast.dump(node, annotate_fields=False) for node in nodes)
    return ast.dump(nodes, annotate_fields=False)


def _parsed(source: str) -> list[ast.stmt]:
    return ast.parse(textwrap.dedent(source)).body


def _docstring_free(body: list[ast.stmt]) -> list[ast.stmt]:
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        return body[1:]
    return body


def function_tree(function: Any, what: str) -> tuple[ast.FunctionDef, str]:
    """The function's definition parsed from its source, with its file's line numbers."""
    try:
        lines, first = inspect.getsourcelines(function)
        filename = inspect.getsourcefile(function) or function.__code__.co_filename
    except (OSError, TypeError) as error:
        raise Unrecognised(f"{what}: no source ({error})") from None
    tree = ast.parse(textwrap.dedent("".join(lines)))
    ast.increment_lineno(tree, first - 1)
    definition = tree.body[0] if tree.body else None
    if not isinstance(definition, ast.FunctionDef):
        raise Unrecognised(f"{what}: not a plain function definition")
    return definition, filename


def _plain_function(tracer_base: type, name: str) -> FunctionType:
    """TracerBase's own `name` (not an inherited one), which must be a plain function."""
    function = vars(tracer_base).get(name)
    if not isinstance(function, FunctionType):
        raise Unrecognised(f"TracerBase.{name}: not a plain function")
    return function


def check_default_filter(tracer_base: type) -> Callable[..., Any]:
    function = _plain_function(tracer_base, "_filter_traceback_frames")
    definition, _ = function_tree(function, "TracerBase._filter_traceback_frames")
    body = _docstring_free(definition.body)
    if _shape(body) != _shape(_parsed(DEFAULT_FILTER_BODY)):
        raise Unrecognised("TracerBase._filter_traceback_frames is not the filter callsite "
                           "reproduces")
    return function


def check_symbolization(traceback_module: ModuleType) -> None:
    symbolized = getattr(traceback_module, "_extract_symbolized_tb", None)
    definition, _ = function_tree(symbolized, "torch.utils._traceback._extract_symbolized_tb")
    if _shape(_docstring_free(definition.body)) != _shape(_parsed(SYMBOLIZED_BODY)):
        raise Unrecognised("torch.utils._traceback._extract_symbolized_tb builds its frames "
                           "differently")
    captured = getattr(traceback_module, "CapturedTraceback", None)
    extract = inspect.getattr_static(captured, "extract", None)
    definition, _ = function_tree(getattr(extract, "__func__", extract),
                                  "CapturedTraceback.extract")
    body = _docstring_free(definition.body)
    if not body or _shape(body[-1]) != _shape(_parsed(EXTRACT_RETURN)[0]):
        raise Unrecognised("CapturedTraceback.extract gathers its frames differently")


#: Node.stack_trace's setter: writing meta["stack_trace"] directly is the same write.
STACK_TRACE_SETTER_BODY = 'self.meta["stack_trace"] = trace'


def stack_trace_setter_is_meta_write(node_type: type) -> bool:
    """Whether ``node.stack_trace = text`` stores only ``node.meta["stack_trace"]`` (and
    Node.__setattr__'s extra work is re-filing the node in its graph's lookup table, which for
    the node create_node has just made leaves the table as it was)."""
    prop = inspect.getattr_static(node_type, "stack_trace", None)
    setter = getattr(prop, "fset", None)
    if setter is None:
        return False
    try:
        definition, _ = function_tree(setter, "Node.stack_trace's setter")
        setattr_definition, _ = function_tree(vars(node_type).get("__setattr__"),
                                              "Node.__setattr__")
    except Unrecognised:
        return False
    arguments = [a.arg for a in definition.args.args]
    if arguments != ["self", "trace"]:
        return False
    if _shape(_docstring_free(definition.body)) != _shape(_parsed(STACK_TRACE_SETTER_BODY)):
        return False
    return _shape(_docstring_free(setattr_definition.body)) == _shape(_parsed(NODE_SETATTR_BODY))


#: Node.__setattr__: a hook for renames, and the lookup table's remove-then-insert.
NODE_SETATTR_BODY = '''
if name == "name" and hasattr(self, "name"):
    m = self.graph.owning_module
    if getattr(m, "_replace_hooks", None):
        if not isinstance(value, str):
            raise AssertionError(f"Expected value to be str, got {type(value)}")
        for user in self.users:
            for replace_hook in m._replace_hooks:
                replace_hook(old=self, new=value, user=user)
update = False
if (
    hasattr(self, name)
    and hasattr(self.graph, "_find_nodes_lookup_table")
    and self in self.graph._find_nodes_lookup_table
):
    update = True
    self.graph._find_nodes_lookup_table.remove(self)
object.__setattr__(self, name, value)
if update:
    self.graph._find_nodes_lookup_table.insert(self)
'''


class _ReplaceRecording(ast.NodeTransformer):
    """Swaps the recording block's body for one call of the hook, placed on the line of
    torch's own CapturedTraceback.extract() call (the line torch's walk reports for this
    frame)."""

    def __init__(self, hook_name: str) -> None:
        self.hook_name = hook_name
        self.replaced = 0

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if _shape(node.test) == _shape(ast.parse(RECORDING_TEST, mode="eval").body) \
                and _shape(node.body) == _shape(_parsed(RECORDING_BODY)):
            first = node.body[0]
            extract_call = first.value if isinstance(first, ast.Assign) else first
            call = ast.Call(func=ast.Name(id=self.hook_name, ctx=ast.Load()),
                            args=[ast.Name(id="self", ctx=ast.Load()),
                                  ast.Name(id="node", ctx=ast.Load())], keywords=[])
            statement = ast.Expr(value=call)
            for target in (call, call.func, *call.args, statement):
                ast.copy_location(target, extract_call)
            node.body = [statement]
            self.replaced += 1
        return node


HOOK_NAME = "_callsite_record_stack_trace"


def rebuilt_create_node(tracer_base: type, proxy: ModuleType,
                        hook: Callable[[Any, Any], None]) -> FunctionType:
    """TracerBase.create_node compiled from torch's source with the recording block calling
    `hook(self, node)`; its globals are torch.fx.proxy's, its file and lines torch's."""
    original = _plain_function(tracer_base, "create_node")
    definition, filename = function_tree(original, "TracerBase.create_node")
    if any(isinstance(node, ast.Name) and node.id in ("super", "__class__", HOOK_NAME)
           for node in ast.walk(definition)):
        raise Unrecognised("TracerBase.create_node uses super()/__class__")
    replacer = _ReplaceRecording(HOOK_NAME)
    definition = replacer.visit(definition)
    if replacer.replaced != 1:
        raise Unrecognised("TracerBase.create_node has no recording block of the shape "
                           "callsite reproduces")
    definition.decorator_list = []
    # A closure over the hook: torch.fx.proxy's namespace gains nothing. The factory is parsed,
    # not constructed, since FunctionDef's fields differ between versions (type_params, 3.12).
    module = ast.parse(f"def _callsite_factory({HOOK_NAME}):\n    return {definition.name}\n")
    factory = module.body[0]
    assert isinstance(factory, ast.FunctionDef)
    for node in [factory, *ast.walk(factory.body[0])]:  # on torch's lines, as the definition
        ast.copy_location(node, definition)
    factory.body.insert(0, definition)
    namespace: dict[str, Any] = {}
    exec(compile(module, filename, "exec"), vars(proxy), namespace)
    rebuilt: FunctionType = namespace["_callsite_factory"](hook)
    rebuilt.__qualname__ = original.__qualname__
    rebuilt.__module__ = original.__module__
    rebuilt.__doc__ = original.__doc__
    rebuilt.__defaults__ = original.__defaults__
    rebuilt.__kwdefaults__ = original.__kwdefaults__
    rebuilt.__annotations__ = dict(original.__annotations__)
    rebuilt.__dict__.update(vars(original))
    rebuilt.__wrapped__ = original  # type: ignore[attr-defined]
    return rebuilt
