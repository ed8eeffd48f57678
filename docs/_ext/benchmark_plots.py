"""Sphinx extension: the benchmarks page's figures and tables, drawn at build time from the
result files in docs/_data/benchmarks/ (bench/*.py --json).

    ```{benchmark-figure} capture
    ```
    ```{benchmark-table} runs
    ```

A figure is a PNG drawn by matplotlib into the doctree folder (not the source tree) and copied
into the site like any image; its caption names what it shows, and its legend lists every run
it was drawn from: Python version, date, machine, load and the command. The page depends on the
result files, so an incremental build redraws when one changes.
"""
from __future__ import annotations

import os
import re
from pathlib import Path

from docutils import nodes
from docutils.parsers.rst import directives
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

import benchmark_tables
from benchmark_data import ResultFileError, describe_date, describe_machine, load_results

_CODE = re.compile(r"`([^`]+)`")


def _results(directive: SphinxDirective) -> dict[str, list[dict]]:
    folder = Path(directive.env.srcdir) / directive.config.benchmark_results
    try:
        results = load_results(folder)
    except ResultFileError as e:
        raise directive.error(str(e)) from None
    for path in sorted(folder.glob("*.json")):
        directive.env.note_dependency(str(path))
    return results


def _inline(text: str) -> list[nodes.Node]:
    """Text with `code` spans as literals."""
    out: list[nodes.Node] = []
    pos = 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            out.append(nodes.Text(text[pos:m.start()]))
        out.append(nodes.literal(m.group(1), m.group(1)))
        pos = m.end()
    if pos < len(text):
        out.append(nodes.Text(text[pos:]))
    return out


def _table(header: list[str], rows: list[list[str]], classes: list[str]) -> nodes.table:
    table = nodes.table(classes=classes)
    group = nodes.tgroup(cols=len(header))
    table += group
    group += [nodes.colspec(colwidth=1) for _ in header]
    head = nodes.thead()
    head += _row(header)
    body = nodes.tbody()
    body += [_row(row) for row in rows]
    group += [head, body]
    return table


def _row(cells: list[str]) -> nodes.row:
    row = nodes.row()
    for cell in cells:
        entry = nodes.entry()
        entry += nodes.paragraph("", "", *_inline(cell))
        row += entry
    return row


def _runs_table(runs: list[dict]) -> nodes.table:
    """The figure's legend: every run it was drawn from (a table: a centred list reads badly)."""
    rows = [[meta["python"], describe_date(meta), describe_machine(meta), f"`{meta['command']}`"]
            for meta in (run["meta"] for run in runs)]
    return _table(["Python", "started", "machine", "command"], rows, ["benchmark-runs"])


class BenchmarkFigure(SphinxDirective):
    """A figure drawn from the result files: its argument names it (benchmark_figures.FIGURES)."""

    required_arguments = 1
    option_spec = {"alt": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        import benchmark_figures  # matplotlib: loaded only by pages that draw

        name = self.arguments[0]
        if name not in benchmark_figures.FIGURES:
            raise self.error(f"benchmark-figure: unknown figure {name!r}; known: "
                             f"{', '.join(benchmark_figures.FIGURES)}")
        png = Path(self.env.doctreedir) / "benchmark_plots" / f"{name}.png"
        try:
            runs = benchmark_figures.draw(name, _results(self), png)
        except ValueError as e:
            raise self.error(f"benchmark-figure {name}: {e}") from None
        # An image path relative to this page's folder: Sphinx copies it into _images/.
        page_dir = Path(self.env.srcdir) / Path(self.env.docname).parent
        caption_text = benchmark_figures.FIGURES[name][1]
        image = nodes.image(uri=os.path.relpath(png, page_dir),
                            alt=self.options.get("alt", caption_text))
        figure = nodes.figure("", image, classes=["benchmark-figure"])
        figure += nodes.caption(caption_text, caption_text)
        legend = nodes.legend()
        legend += _runs_table(runs)
        figure += legend
        return [figure]


class BenchmarkTable(SphinxDirective):
    """A table computed from the result files: its argument names it (benchmark_tables.TABLES)."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        name = self.arguments[0]
        try:
            header, rows = benchmark_tables.table(name, _results(self))
        except ValueError as e:
            raise self.error(f"benchmark-table {name}: {e}") from None
        return [_table(header, rows, ["benchmark-table"])]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_config_value("benchmark_results", "_data/benchmarks", "env")
    app.add_directive("benchmark-figure", BenchmarkFigure)
    app.add_directive("benchmark-table", BenchmarkTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
