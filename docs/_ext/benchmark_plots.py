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
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective

import benchmark_tables
from benchmark_data import describe_date, describe_machine, load_result, load_results

_CODE = re.compile(r"`([^`]+)`")


def _table(header: list[str], rows: list[list[str]], classes: list[str],
           labels: int | None = None) -> nodes.table:
    """A docutils table of plain-string cells; `code` spans become literals (re.split leaves
    them at the odd indices). Given `labels`, that many leading columns are aligned left and
    the rest right, as a markdown table's `:--` and `--:`."""
    def align(i: int) -> list[str]:
        return [] if labels is None else ["text-left" if i < labels else "text-right"]

    def row(cells: list[str]) -> nodes.row:
        return nodes.row("", *(nodes.entry("", nodes.paragraph("", "", *(
            nodes.literal(part, part) if i % 2 else nodes.Text(part)
            for i, part in enumerate(_CODE.split(cell)) if part)), classes=align(column))
            for column, cell in enumerate(cells)))

    group = nodes.tgroup("", *(nodes.colspec(colwidth=1) for _ in header), cols=len(header))
    group += [nodes.thead("", row(header)), nodes.tbody("", *map(row, rows))]
    return nodes.table("", group, classes=classes)


class BenchmarkDirective(SphinxDirective):
    """A figure or table (its argument names it) drawn from the result files; the page depends
    on every one of them, the subfolders' too."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        folder = Path(self.env.srcdir, "_data", "benchmarks")
        for path in sorted(folder.rglob("*.json")):
            self.env.note_dependency(str(path))
        try:
            return self.draw(self.arguments[0], folder)
        except ValueError as e:  # ResultFileError too
            raise self.error(f"{self.name} {self.arguments[0]}: {e}") from None


class BenchmarkFigure(BenchmarkDirective):
    """benchmark_figures.FIGURES; its legend is a table of the runs (a centred list reads badly)."""

    def draw(self, name: str, folder: Path) -> list[nodes.Node]:
        import benchmark_figures  # matplotlib: loaded only by pages that draw

        png = Path(self.env.doctreedir) / "benchmark_plots" / f"{name}.png"
        runs = benchmark_figures.draw(name, load_results(folder), png)
        # An image path relative to this page's folder: Sphinx copies it into _images/.
        page_dir = Path(self.env.srcdir) / Path(self.env.docname).parent
        caption = benchmark_figures.FIGURES[name][1]
        legend = _table(["Python", "started", "machine", "command"],
                        [[meta["python"], describe_date(meta), describe_machine(meta),
                          f"`{meta['command']}`"] for meta in (run["meta"] for run in runs)],
                        ["benchmark-runs"])
        return [nodes.figure("", nodes.image(uri=os.path.relpath(png, page_dir), alt=caption),
                             nodes.caption(caption, caption), nodes.legend("", legend),
                             classes=["benchmark-figure"])]


class BenchmarkTable(BenchmarkDirective):
    """benchmark_tables.TABLES, or a COLD_TABLES one of its one file or subfolder."""

    def draw(self, name: str, folder: Path) -> list[nodes.Node]:
        if name not in benchmark_tables.COLD_TABLES:
            return [_table(*benchmark_tables.table(name, load_results(folder)),
                           ["benchmark-table"])]
        file, labels, compute = benchmark_tables.COLD_TABLES[name]
        path = folder / file
        data = load_results(path) if path.is_dir() else load_result(path)
        # Laid out as the page's markdown tables around it, which MyST marks "colwidths-auto".
        return [_table(*compute(data), ["colwidths-auto"], labels)]


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("benchmark-figure", BenchmarkFigure)
    app.add_directive("benchmark-table", BenchmarkTable)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
