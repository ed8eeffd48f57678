"""The Python API reference, generated from the installed package.

- ``{callsite-api}`` in a page expands to one section per public module of the package (the
  package itself and every submodule whose name does not start with ``_``), each listing the
  module's ``__all__``: classes and functions through autodoc, data through ``py:data`` with its
  type and value. A submodule that appears in the package later is documented without an edit.
- Signatures of C++ functions and types (nanobind objects, which carry no annotations) are
  taken from the package's ``.pyi`` stubs, which ``mypy.stubtest`` checks against the runtime.
- Each public module-level name may have notes in ``api_notes.NOTES``: the errors it raises
  (each with a call that raises it, run by tests/docs/test_docs_api.py) and an example (run by
  tests/docs/test_docs_snippets.py), rendered after the docstring.
"""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

from sphinx.application import Sphinx

import api_notes


# --- which modules and names ----------------------------------------------------------------------

def public_modules(package: str = "callsite") -> list[ModuleType]:
    """The package and its public submodules that import here (a submodule needing an optional
    dependency that is missing is left out: its page would otherwise fail the build)."""
    root = importlib.import_module(package)
    mods = [root]
    for info in sorted(pkgutil.iter_modules(root.__path__), key=lambda i: i.name):
        if info.name.startswith("_") or info.name in api_notes.NOT_MODULES:
            continue
        try:
            mods.append(importlib.import_module(f"{package}.{info.name}"))
        except ImportError:
            continue
    return mods


def public_names(module: ModuleType) -> list[str]:
    return sorted(getattr(module, "__all__", ()))


def is_data(obj: object) -> bool:
    return not (inspect.isclass(obj) or callable(obj) or inspect.ismodule(obj))


def public_members(cls: type) -> list[str]:
    """Public attributes a class defines itself (methods, properties, class methods)."""
    out = []
    for name, value in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(value, (staticmethod, classmethod, property)) or callable(value) \
                or inspect.isdatadescriptor(value) or inspect.ismethoddescriptor(value):
            out.append(name)
    return sorted(out)


# --- signatures from the stubs --------------------------------------------------------------------

class Stubs:
    """Every function signature in the package's .pyi files, by qualified name within its file."""

    def __init__(self, package_dir: Path) -> None:
        self.by_qualname: dict[str, list[tuple[str, str | None]]] = {}
        #: A stub's private aliases (``_Rule = str | Pattern[str]``), spelled out in signatures.
        self.aliases: dict[str, str] = {}
        for pyi in sorted(package_dir.rglob("*.pyi")):
            tree = ast.parse(pyi.read_text(encoding="utf-8"))
            for node in tree.body:
                if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                        and isinstance(node.targets[0], ast.Name) and node.targets[0].id.startswith("_") \
                        and isinstance(node.value, (ast.BinOp, ast.Subscript)):
                    self.aliases[node.targets[0].id] = ast.unparse(node.value)
            self._walk(tree.body, "")

    def _walk(self, body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.ClassDef):
                self._walk(node.body, f"{prefix}{node.name}.")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(isinstance(d, ast.Name) and d.id == "overload" for d in node.decorator_list):
                    continue  # the implementation's or the first plain signature is shown
                self.by_qualname.setdefault(prefix + node.name, []).append(self._signature(node))
            elif isinstance(node, ast.If):  # version-conditional definitions
                self._walk(node.body, prefix)

    @staticmethod
    def _signature(node: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[str, str | None]:
        args = node.args
        positional = args.posonlyargs + args.args
        is_method = bool(positional) and positional[0].arg in ("self", "cls")
        if is_method:
            if args.posonlyargs:
                args.posonlyargs = args.posonlyargs[1:]
            else:
                args.args = args.args[1:]
        text = ast.unparse(args)
        return f"({text})", ast.unparse(node.returns) if node.returns else None

    def lookup(self, qualname: str) -> tuple[str, str | None] | None:
        found = self.by_qualname.get(qualname)
        if not found:
            return None
        args, ret = found[0]
        for alias, text in self.aliases.items():
            args = re.sub(rf"\b{alias}\b", text, args)
            ret = re.sub(rf"\b{alias}\b", text, ret) if ret else ret
        return args, ret


_stubs: Stubs | None = None


def stubs() -> Stubs:
    global _stubs
    if _stubs is None:
        import callsite
        _stubs = Stubs(Path(callsite.__file__).parent)
    return _stubs


def _is_python_defined(obj: object) -> bool:
    if inspect.isfunction(obj) or inspect.ismethod(obj):
        return True
    if inspect.isclass(obj):
        return not any(hasattr(obj, a) for a in ("__nb_signature__",)) and \
            type(obj) is type and "__init__" in vars(obj) and inspect.isfunction(vars(obj)["__init__"])
    return False


def _process_signature(app: Sphinx, what: str, name: str, obj: Any, options: Any,
                       signature: str | None, return_annotation: str | None):
    if _is_python_defined(obj):
        return None
    qualname = getattr(obj, "__qualname__", None) or name.rsplit(".", 1)[-1]
    if what == "class":
        found = stubs().lookup(f"{qualname}.__new__") or stubs().lookup(f"{qualname}.__init__")
        return (found[0], None) if found else None
    if what in ("function", "method", "classmethod"):
        found = stubs().lookup(qualname)
        if found is None and "." not in qualname:  # a C function re-exported under a module
            found = stubs().lookup(name.rsplit(".", 1)[-1])
        return found
    return None


# --- the generated page -----------------------------------------------------------------------------

def _data_block(module: str, name: str, value: object) -> list[str]:
    text = api_notes.DATA.get(f"{module}.{name}", "")
    shown = repr(value)
    if len(shown) > 120:
        shown = shown[:117] + "..."
    return [f".. py:data:: {name}", f"   :type: {type(value).__name__}", f"   :value: {shown}", "",
            *(f"   {line}" for line in textwrap.dedent(text).strip().splitlines()), ""]


def module_section(module: ModuleType) -> str:
    names = public_names(module)
    data = [n for n in names if is_data(getattr(module, n))]
    lines = [f"## `{module.__name__}`", "", "```{eval-rst}", f".. automodule:: {module.__name__}",
             "   :members: " + ", ".join(n for n in names if n not in data),
             "   :imported-members:", "   :undoc-members:", ""]
    for n in data:
        lines += _data_block(module.__name__, n, getattr(module, n))
    lines += ["```", ""]
    return "\n".join(lines)


def _expand(app: Sphinx, docname: str, source: list[str]) -> None:
    if "{callsite-api}" not in source[0]:
        return
    body = "\n".join(module_section(m) for m in public_modules())
    source[0] = re.sub(r"^```\{callsite-api\}\n```\n?", lambda _: body, source[0], flags=re.M)


# --- notes: errors and examples ------------------------------------------------------------------

def _notes(app: Sphinx, what: str, name: str, obj: object, options: object,
           lines: list[str]) -> None:
    note = api_notes.NOTES.get(name)
    if not note:
        return
    raises = note.get("raises", ())
    if raises:
        lines += [""]
        for exc, when, _call in raises:
            lines.append(f":raises {exc}: {when}")
    example = note.get("example")
    if example:
        lines += ["", ".. rubric:: Example", "", ".. code-block:: python", ""]
        lines += [f"   {line}" if line else "" for line in textwrap.dedent(example).strip().splitlines()]
        lines.append("")


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("source-read", _expand)
    app.connect("autodoc-process-signature", _process_signature)
    # After the plain-text-to-reST conversion (plain_docstrings, priority 500 by default).
    app.connect("autodoc-process-docstring", _notes, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
