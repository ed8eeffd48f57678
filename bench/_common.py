# bench/_common.py — what every bench script shares besides the timing harness.
"""The command line every benchmark spells alike (--repeats, --quick, --json, a folder for kept
files) and its result file. The timing itself, the tables and the result files' schema are the
package's (callsite._cli.timing, .tables, .results), so that ``python -m callsite bench`` and
these scripts measure and record the same way. callsite is imported only to write a result
file: the scripts that read callgrind files run without a build."""
from __future__ import annotations

import argparse
import os
import sys

try:  # the results module takes the run's start (the time, the load average) when first imported
    from callsite._cli import results as _results, tables as _tables
except ImportError:  # the scripts that read callgrind files run without a build (nor --json)
    _results = _tables = None

#: The checkout these scripts are part of: the commit a result file names.
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def use_docs_ext() -> None:
    """Makes docs/_ext's modules importable: the docs' reader of the result files and the
    page's tables, which the scripts use too."""
    folder = os.path.join(REPO, "docs", "_ext")
    if folder not in sys.path:
        sys.path.insert(0, folder)


def page_tables():
    """docs/_ext/benchmark_tables.py: the benchmarks page's tables, which the scripts print too,
    so that a run's printout and the page share one format."""
    use_docs_ext()
    import benchmark_tables
    return benchmark_tables


def page_table(table: tuple[list[str], list[list[str]]], labels: int = 1) -> str:
    """One of those tables as markdown, laid out as the page lays it out: the first `labels`
    columns left-aligned, the figures after them right-aligned."""
    header, rows = table
    return _tables.markdown_table(header, rows, align="l" * labels + "r" * (len(header) - labels))


def run_table(table, bench: str, run: dict, labels: int = 1) -> str:
    """page_table of this run alone: `table` is the page's function of the results by bench,
    `run` what a result file of `bench` would hold (its Python's version, else this one's)."""
    run = {**run, "meta": {"python": run.get("python") or sys.version.split()[0]}}
    return page_table(table({bench: [run]}), labels)


def count(text: str) -> int:
    """argparse type of a count of repeats, builds, files...: an integer of at least 1."""
    if not text.isdecimal() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expected an integer >= 1, got {text!r}")
    return int(text)


def counts(text: str) -> list[int]:
    """argparse type of a comma-separated list of counts ("5,20,50")."""
    try:
        return [count(part) for part in text.split(",")]
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"expected integers >= 1 separated by commas, got {text!r}") from None


def names(known: tuple[str, ...]):
    """argparse type of a comma-separated subset of `known`."""
    def parse(text: str) -> list[str]:
        chosen = [part for part in text.split(",") if part]
        if not chosen or not set(chosen) <= set(known):
            raise argparse.ArgumentTypeError(f"expected names among {', '.join(known)} separated "
                                             f"by commas, got {text!r}")
        return chosen
    return parse


def parser(doc: str | None, *, repeats: int | None = None, quick: str | None = None,
           json: bool = True) -> argparse.ArgumentParser:
    """A script's parser with the shared options: --repeats N (when `repeats` is its default),
    --quick (when `quick` says what it shortens) and --json PATH."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    if repeats is not None:
        p.add_argument("--repeats", type=count, default=repeats, metavar="N",
                       help=f"repeats of each measurement, the minimum kept (default {repeats})")
    if quick is not None:
        p.add_argument("--quick", action="store_true", help=f"a smoke run: {quick}")
    if json:
        p.add_argument("--json", type=_results.result_path, metavar="PATH",
                       help="write the results here, with the run's metadata")
    return p


def output_dir(path: str) -> str:
    """argparse type of a folder a run writes files into (--keep-callgrind, --out): created when
    missing, refused before the run when it cannot be (a file of that name, no permission)."""
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"expected a folder, got the file {path!r}")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise argparse.ArgumentTypeError(f"cannot create the folder {path!r}: {e.strerror}")
    if not os.access(path, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write into the folder {path!r}")
    return path


def write_results(path: str, bench: str, data: dict) -> None:
    """One benchmark's results with the run's metadata (callsite._cli.results), this checkout's
    commit among them."""
    _results.write_results(path, bench, data, checkout=REPO)
    if path != "-":
        print(f"wrote {path}", file=sys.stderr)


def environment_line() -> str:
    """One line naming the interpreter, for every table's heading."""
    v = sys.version_info
    return f"Python {v.major}.{v.minor}.{v.micro} ({sys.executable})"
