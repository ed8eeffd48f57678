"""callsite's docstrings as autodoc renders them.

They are written as plain text for help() (an indented example after a sentence, a glob like
*_ops_gen.py); rendered as reST they would warn. An indented block under a paragraph becomes a
literal block and a lone "*" outside ``literals`` is escaped.
"""
from __future__ import annotations

import re

from sphinx.application import Sphinx

_LIST_ITEM = re.compile(r"^(?:[-*+] |\d+[.)] )")


def _escape_stars(line: str) -> str:
    parts = line.split("``")
    for i in range(0, len(parts), 2):  # outside ``...``
        parts[i] = re.sub(r"(?<![*\\])\*(?!\*)", r"\\*", parts[i])
    return "``".join(parts)


def plain_docstring_to_rest(lines: list[str]) -> list[str]:
    out: list[str] = []
    in_block = False
    last_text = ""
    for line in lines:
        indented = line.startswith((" ", "\t"))
        if not line.strip():
            out.append(line)
            continue
        if indented and not in_block and last_text and not last_text.startswith((" ", "\t")) \
                and not _LIST_ITEM.match(last_text) and not last_text.rstrip().endswith("::") \
                and not last_text.lstrip().startswith(":"):
            out += ["", "::", ""]
            in_block = True
        elif not indented:
            in_block = False
        out.append(line if in_block else _escape_stars(line))
        last_text = line
    return out


def _process_docstring(app: Sphinx, what: str, name: str, obj: object, options: object,
                       lines: list[str]) -> None:
    lines[:] = plain_docstring_to_rest(lines)


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("autodoc-process-docstring", _process_docstring)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
