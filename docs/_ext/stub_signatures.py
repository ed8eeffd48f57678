"""Signatures of callsite's C functions and types for autodoc, read from the package's .pyi stubs.

A C function or type carries at most an untyped ``__text_signature__``; the stubs have the
types, and ``mypy.stubtest`` holds them to the runtime. Functions defined in Python keep the
signature autodoc reads from them. A stub's private aliases (``_Rule = str | Pattern[str]``)
are spelled out, since readers cannot look them up.
"""
from __future__ import annotations

import ast
import functools
import inspect
from pathlib import Path

from sphinx.application import Sphinx


@functools.cache
def stub_signatures(package_dir: Path) -> dict[str, tuple[str, str | None]]:
    """``(args, return annotation)`` of every stub function by its qualified name within its
    file (an ``@overload``'s is left out: the plain definition, if any, is what is shown)."""
    found: dict[str, tuple[str, str | None]] = {}
    for pyi in sorted(package_dir.rglob("*.pyi")):
        tree = ast.parse(pyi.read_text(encoding="utf-8"))
        spelled = _Aliases({n.targets[0].id: n.value for n in tree.body if isinstance(n, ast.Assign)
                            and isinstance(n.targets[0], ast.Name) and n.targets[0].id.startswith("_")})
        todo: list[tuple[list[ast.stmt], str]] = [(tree.body, "")]
        while todo:
            body, prefix = todo.pop()
            for node in body:
                if isinstance(node, ast.ClassDef):
                    todo.append((node.body, f"{prefix}{node.name}."))
                elif isinstance(node, ast.If):  # a version-conditional definition
                    todo.append((node.body, prefix))
                elif isinstance(node, ast.FunctionDef) and not any(
                        isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list):
                    node = spelled.visit(node)
                    args = node.args.posonlyargs or node.args.args
                    if prefix and args and args[0].arg in ("self", "cls"):
                        del args[0]
                    found.setdefault(prefix + node.name, (f"({ast.unparse(node.args)})",
                                                          ast.unparse(node.returns) if node.returns else None))
    return found


class _Aliases(ast.NodeTransformer):
    def __init__(self, aliases: dict[str, ast.expr]) -> None:
        self.aliases = aliases

    def visit_Name(self, node: ast.Name) -> ast.expr:
        return self.aliases.get(node.id, node)


def _signature(app: Sphinx, what: str, name: str, obj: object, options: object,
               signature: str | None, return_annotation: str | None) -> tuple[str, str | None] | None:
    if inspect.isfunction(obj):  # defined in Python: its own annotations
        return None
    import callsite

    stubs = stub_signatures(Path(callsite.__file__).parent)
    qualname = getattr(obj, "__qualname__", name.rpartition(".")[2])
    if what == "class":
        found = stubs.get(f"{qualname}.__new__") or stubs.get(f"{qualname}.__init__")
        return (found[0], None) if found else None
    return stubs.get(qualname) if what in ("function", "method", "classmethod") else None


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("autodoc-process-signature", _signature)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
