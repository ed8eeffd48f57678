"""The benchmark result files the docs page is drawn from (docs/_data/benchmarks/): each carries
its run's metadata and the data its figure reads, and the page's extension draws every figure
and computes every table from them."""
from __future__ import annotations

import datetime
import json
import pathlib
import re
import sys

import pytest

from where import REPO  # noqa: E402
RESULTS = REPO / "docs" / "_data" / "benchmarks"
EXT = REPO / "docs" / "_ext"
HOST_PYTHONS = ("3.10", "3.11", "3.12", "3.13")

sys.path.insert(0, str(EXT))
import benchmark_data  # noqa: E402  (no Sphinx, no matplotlib)
import benchmark_tables  # noqa: E402

FILES = sorted(RESULTS.glob("*.json"))


def _load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_there_are_result_files_for_every_figure():
    benches = {_load(p)["bench"] for p in FILES}
    assert {"capture", "mlir", "dsls", "tracking"} <= benches, f"found {sorted(benches)} in {RESULTS}"


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_result_file_carries_its_runs_metadata(path):
    result = _load(path)
    meta = result["meta"]
    started = datetime.datetime.fromisoformat(meta["date"])
    assert started.utcoffset() == datetime.timedelta(0), f"date {meta['date']} is not UTC"
    machine = meta["machine"]
    assert isinstance(machine["cpu"], str) and machine["cpu"].strip()
    assert isinstance(machine["cores"], int) and machine["cores"] >= 1
    assert machine["memory_gib"] > 0
    load = machine["load_average_at_start"]
    assert len(load) == 3 and all(isinstance(x, (int, float)) and x >= 0 for x in load)
    assert re.fullmatch(r"3\.\d+\.\d+\S*", meta["python"]), meta["python"]
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", meta["callsite"] or ""), meta["callsite"]
    # The command that wrote this file, as typed: its script and its --json.
    assert f"bench/bench_{result['bench']}.py" in meta["command"]
    assert "--json" in meta["command"]


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_every_result_file_has_what_its_figure_reads(path):
    result = _load(path)
    bench = result["bench"]
    if bench == "capture":
        table = result["tables"]["capture"]
        assert len(table) >= 3, "a line against depth needs at least three depths"
        for depth, row in table.items():
            assert row["callsite (internal)"]["ns"] > 0, depth
            assert row["callsite (internal)"]["frames"] == int(depth)
    elif bench == "mlir":
        assert result["bindings"], "no MLIR bindings were measured"
        for name, measured in result["bindings"].items():
            ops = measured["ops_ns"]
            assert ops["(a) Location.unknown()"] > 0 and ops["(c) callsite auto_locations"] > 0, name
            assert ("(b) MLIR loc_tracebacks()" in ops) == (measured["mlir_walk_skipped"] is None), name
    elif bench == "dsls":
        for name, dsl in result["dsls"].items():
            if "skipped" in dsl:
                assert dsl["skipped"].strip(), f"{name} skipped without a reason"
                continue
            measured = dsl[result["measure"]]
            assert measured["none"] > 0 and measured["callsite"] > 0 and measured["mlir"] > 0, name
    elif bench == "tracking":
        assert result["tax"], "no tax measured"
        for record in result["tax"]:
            kinds = {name.split()[0] for name in record["tax_ns"]}
            assert kinds == {"callsite", "lean", "plain"}, record
        assert result["query"]["rows"]
    elif bench == "interp":
        forms = result["forms"]
        assert {"plain", "framed"} <= set(forms), "the lean interpreter's forms are missing"
        for name, form in forms.items():
            assert form["base"] in forms and form["cpu_ns"] > 0, name
            assert form.get("instructions", 0) > 0 or form.get("no_instructions"), name
        assert forms["framed"].get("callsite_instructions", 1) > 0, "framed ran no callsite code"


def test_capture_covers_every_host_python():
    versions = {benchmark_data.minor(_load(p)) for p in FILES if _load(p)["bench"] == "capture"}
    assert set(HOST_PYTHONS) <= versions


def test_the_loader_names_the_file_and_the_missing_field(tmp_path):
    good = _load(next(p for p in FILES if _load(p)["bench"] == "capture"))
    del good["tables"]["capture"]
    (tmp_path / "broken.json").write_text(json.dumps(good), encoding="utf-8")
    with pytest.raises(benchmark_data.ResultFileError, match=r"broken\.json: tables lacks capture"):
        benchmark_data.load_results(tmp_path)


def test_every_table_is_computed_from_the_files():
    results = benchmark_data.load_results(RESULTS)
    for name in benchmark_tables.TABLES:
        header, rows = benchmark_tables.table(name, results)
        assert rows, f"table {name} is empty"
        assert all(len(row) == len(header) for row in rows), name
    header, rows = benchmark_tables.table("runs", results)
    assert len(rows) == len(FILES)


def test_the_extension_draws_every_figure(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is the docs' requirement (requirements/docs.txt)")
    from PIL import Image  # matplotlib's dependency

    import benchmark_figures

    results = benchmark_data.load_results(RESULTS)
    for name in benchmark_figures.FIGURES:
        png = tmp_path / f"{name}.png"
        runs = benchmark_figures.draw(name, results, png)
        assert runs, name
        with Image.open(png) as image:
            width, height = image.size
            colours = len(image.convert("RGB").getcolors(maxcolors=1 << 20) or ())
        assert width > 400 and height > 200, (name, image.size)
        assert colours > 10, f"figure {name} is (nearly) blank"


def test_an_unknown_figure_is_an_error_naming_it(tmp_path):
    pytest.importorskip("matplotlib", reason="matplotlib is the docs' requirement (requirements/docs.txt)")
    import benchmark_figures

    with pytest.raises(ValueError, match="unknown benchmark figure 'speed'"):
        benchmark_figures.draw("speed", {}, tmp_path / "x.png")
