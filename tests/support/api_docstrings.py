"""The public Python API and what its docstrings promise: the ``Raises:`` entries (each naming,
after "as in", a call that raises it) and the ``Example:`` program, in the Google style that
docs/api/python.md renders through sphinx.ext.napoleon."""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import textwrap
import types

#: Submodules without a leading underscore that are not API, and why.
NOT_MODULES = {"callsite_calc": "the demo's calc interpreter (examples/interp), built for the native-frames demo"}

_ENTRY = re.compile(r"^(\w+): (.*)$")
_CALL = re.compile(r"as in ``(.+)``\.?$")


def public_modules() -> list[types.ModuleType]:
    import callsite

    return [callsite] + [importlib.import_module(f"callsite.{info.name}")
                         for info in sorted(pkgutil.iter_modules(callsite.__path__), key=lambda i: i.name)
                         if not info.name.startswith("_") and info.name not in NOT_MODULES]


def public_names() -> dict[str, object]:
    """``module.name`` -> object, for every name in a public module's ``__all__``."""
    return {f"{mod.__name__}.{n}": getattr(mod, n) for mod in public_modules() for n in mod.__all__}


def section(obj: object, title: str) -> list[str]:
    """The lines of the docstring's ``title:`` section, dedented ([] when it has none)."""
    lines = inspect.cleandoc(getattr(obj, "__doc__", None) or "").splitlines()
    if f"{title}:" not in lines:
        return []
    body = []
    for line in lines[lines.index(f"{title}:") + 1:]:
        if line and not line[0].isspace():  # the next section, or prose after this one
            break
        body.append(line)
    return textwrap.dedent("\n".join(body)).strip("\n").splitlines()


def raises(obj: object) -> list[tuple[str, str | None]]:
    """``(exception name, the call its entry names or None)`` per ``Raises:`` entry."""
    entries: list[list[str]] = []
    for line in section(obj, "Raises"):
        if _ENTRY.match(line):
            entries.append([line])
        elif entries:
            entries[-1].append(line.strip())
    out = []
    for entry in entries:
        exc, text = _ENTRY.match(" ".join(entry)).groups()
        call = _CALL.search(text)
        out.append((exc, call.group(1) if call else None))
    return out


def example(obj: object) -> str | None:
    """The program of the docstring's ``Example:`` section (a literal block after ``::``)."""
    lines = section(obj, "Example")
    if not lines or lines[0] != "::":
        return None
    return textwrap.dedent("\n".join(lines[1:])).strip() + "\n"
