"""The site's navigation lives in index.md's toctrees; this keeps it honest as pages come and go.

A toctree line naming a page listed in conf.py's ``callsite_pending_pages`` that does not exist
yet is dropped instead of failing the build (any other missing page still fails), and a Markdown page in docs/ that no toctree lists is added under "More pages", so a
page another developer adds is reachable before anyone edits index.md.
"""
from __future__ import annotations

import re
from pathlib import Path

from sphinx.application import Sphinx

_FENCE = re.compile(r"^(```+|:::+)\{toctree\}")


def _pages(srcdir: Path) -> set[str]:
    return {p.relative_to(srcdir).with_suffix("").as_posix()
            for p in srcdir.rglob("*.md") if not any(part.startswith("_") for part in p.parts)}


def _fix_index(app: Sphinx, docname: str, source: list[str]) -> None:
    if docname != app.config.root_doc:
        return
    srcdir = Path(app.srcdir)
    pages = _pages(srcdir)
    listed: set[str] = set()
    out: list[str] = []
    fence = None
    for line in source[0].splitlines():
        stripped = line.strip()
        if fence is None and _FENCE.match(stripped):
            fence = _FENCE.match(stripped).group(1)  # type: ignore[union-attr]
        elif fence is not None and stripped == fence:
            fence = None
        elif fence is not None and stripped and not stripped.startswith(":"):
            target = stripped.split("<")[-1].rstrip(">").strip()
            if target not in pages and target in app.config.callsite_pending_pages:
                continue
            listed.add(target)
        out.append(line)
    extra = sorted(pages - listed - {docname})
    if extra:
        out += ["", "```{toctree}", ":caption: More pages", ":maxdepth: 1", "", *extra, "```", ""]
    source[0] = "\n".join(out) + "\n"


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("source-read", _fix_index)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


# --- docstrings -------------------------------------------------------------------------------
# callsite's docstrings are written as plain text for help() (an indented example after a
# sentence, a glob like *_ops_gen.py); rendered as reST they would warn. An indented block under
# a paragraph becomes a literal block and a lone "*" outside ``literals`` is escaped.

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


_pending: set[str] = set()


def _soften_pending_links(app: Sphinx, docname: str, source: list[str]) -> None:
    """A {doc} link to a page listed in conf.py's callsite_pending_pages that does not exist
    yet renders as its text; every other missing page still fails the build."""
    srcdir = Path(app.srcdir)
    here = (srcdir / docname).parent

    def repl(m: re.Match[str]) -> str:
        text, target = m.group(1), m.group(2) or m.group(1)
        path = (here / target).resolve() if not target.startswith("/") else srcdir / target[1:]
        page = path.relative_to(srcdir.resolve()).as_posix() if path.is_relative_to(srcdir.resolve()) else target
        if page in app.config.callsite_pending_pages and not path.with_suffix(".md").exists():
            return f"*{text.split(' <')[0]}*"
        return m.group(0)

    source[0] = re.sub(r"\{doc\}`([^`<]*?)(?:\s*<([^`>]+)>)?`", repl, source[0])


_old_setup = setup


def setup(app: Sphinx) -> dict[str, object]:  # noqa: F811
    app.add_config_value("callsite_pending_pages", [], "env")
    app.connect("autodoc-process-docstring", _process_docstring)
    app.connect("source-read", _soften_pending_links)
    return _old_setup(app)
