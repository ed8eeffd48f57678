"""The cold-path benchmarks (bench_torch.py --paths first, bench_mlir.py --contexts): each reports
both cases side by side in one result file (torch: the first trace in a fresh process and the
second; MLIR: a new Context per build and one Context), with the run's metadata. Checked on the
committed result files and on short runs; no timing is asserted, only what is reported."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

from where import REPO  # noqa: E402
BENCH = REPO / "bench"
RESULTS = REPO / "docs" / "_data" / "benchmarks" / "cold"
MODES = ("none", "torch", "callsite")
STAT_FIELDS = ("none_s", "torch_s", "callsite_s", "torch_added_s", "callsite_added_s",
               "added_ratio", "callsite_vs_none", "torch_vs_none", "torch_added_us_per_node",
               "callsite_added_us_per_node")
COLD_KEYS = {f"{mode}/{kind}" for mode in "abcp" for kind in ("one", "new")}

sys.path.insert(0, str(BENCH))


def _load(path):
    return json.loads(pathlib.Path(path).read_text(encoding="utf-8"))


def _check_meta(result, script):
    meta = result["meta"]
    assert meta["date"] and meta["python"].startswith("3.")
    assert {"cpu", "cores", "memory_gib", "load_average_at_start"} <= set(meta["machine"])
    assert f"bench/{script}" in meta["command"] and "--json" in meta["command"]


def _committed(name, bench, script):
    """A committed result file of `bench`, written by bench/`script` with --json."""
    result = _load(RESULTS / name)
    assert result["bench"] == bench
    _check_meta(result, script)
    return result


def _deep_model_rows(result):
    """The rows of bench_torch.py --paths first: one per deep model, at least two."""
    rows = [r for r in result["rows"] if r["path"] == "first"]
    assert len(rows) >= 2
    return rows


def _check_first_row(row, repeats_at_least, path="first"):
    assert row["path"] == path and row["identical"] is True
    assert row["nodes"] > 0 and row["recorded"] > 0
    assert row["frames"]["max"] >= row["frames"]["mean"] > 0
    assert row["repeats"] >= repeats_at_least
    assert row["torch_imports_s"] >= 0
    for run in ("first", "again"):  # both cases, side by side in the same row
        entry = row[run]
        for clock in ("samples_cpu_s", "samples_wall_s"):
            assert set(entry[clock]) == set(MODES)
            assert all(len(v) == row["repeats"] for v in entry[clock].values())
        for stat in ("min", "median"):
            assert set(STAT_FIELDS) <= set(entry[stat]), (run, stat)
            assert all(entry[stat][m + "_s"] > 0 for m in MODES)
        assert set(entry["noise"]) == set(MODES)


def _check_contexts(contexts, repeats_at_least):
    assert contexts["sizes"] and contexts["repeats"] >= repeats_at_least
    for ops, entry in contexts["sizes"].items():
        assert int(ops) == entry["ops"] > 0
        for stat in ("min", "median"):
            assert set(entry[stat]) == COLD_KEYS, (ops, stat)  # one Context and a new one
        assert all(len(v) == contexts["repeats"] for v in entry["samples_s"].values())
        assert entry["identical_to_mlir"] is True


def _check_instructions(counts):
    assert counts["sizes"] and counts["builds"] >= 1
    for ops, per_build in counts["sizes"].items():
        assert set(per_build) == COLD_KEYS, ops
        assert all(v > 0 for v in per_build.values())


# --- the committed result files that docs/benchmarks.md's cold-path section quotes -------------

def test_the_cold_path_result_files_are_committed():
    names = {p.name for p in RESULTS.glob("*.json")}
    assert {"torch-first-py3.11.json", "torch-first-callgrind-py3.11.json",
            "torch-paths-py3.11.json", "mlir-contexts-py3.11.json",
            "memory-py3.11.json"} <= names, names


def test_the_memory_result_file_has_every_mode_of_both_parts():
    result = _committed("memory-py3.11.json", "cold_memory", "bench_cold_memory.py")
    assert result["torch"]["tracers"] >= 2000 and result["mlir"]["contexts"] >= 1000
    assert [row["mode"] for row in result["torch"]["modes"]] == ["none", "torch", "callsite"]
    assert [row["mode"] for row in result["mlir"]["modes"]] == ["a", "b", "c"]
    for part in ("torch", "mlir"):
        for row in result[part]["modes"]:
            assert row["growth"]["rss_last_kib"] == row["samples_kib"][-1][1]
    assert all(row["live_contexts_at_end"] == 0 for row in result["mlir"]["modes"])


def test_the_torch_result_file_reports_first_and_again_for_every_deep_model():
    result = _committed("torch-first-py3.11.json", "torch", "bench_torch.py")
    for row in _deep_model_rows(result):
        _check_first_row(row, repeats_at_least=6)


def _check_compile_row(row, repeats_at_least):
    assert row["nodes"] > 0 and row["recorded"] > 0 and row["repeats"] >= repeats_at_least
    for run in ("first", "again"):
        assert set(row[run]["noise"]) == {"torch", "skipped"}
        for stat in ("min", "median"):
            r = row[run][stat]
            assert r["stack_trace_s"] == pytest.approx(r["torch_s"] - r["skipped_s"])
            assert r["stack_trace_share"] == pytest.approx(r["stack_trace_s"] / r["torch_s"])


def test_the_torch_paths_file_reports_make_fx_export_and_compile_for_every_deep_model():
    """bench_torch.py --paths make_fx,export,compile: the rows of make_fx and export are
    --paths first's (the same keys, drawn by the same table), compile's its own."""
    result = _committed("torch-paths-py3.11.json", "torch", "bench_torch.py")
    paths = [r["path"] for r in result["rows"]]
    assert {"make_fx", "export", "compile"} == set(paths) and paths.count("make_fx") >= 1
    for row in result["rows"]:
        if row["path"] == "compile":
            _check_compile_row(row, repeats_at_least=5)
        else:
            _check_first_row(row, repeats_at_least=5, path=row["path"])


def test_the_torch_callgrind_file_counts_both_traces_of_every_deep_model():
    result = _committed("torch-first-callgrind-py3.11.json", "torch", "bench_torch.py")
    for row in _deep_model_rows(result):
        ins = row["instructions"]
        assert ins["nodes"] > 0
        for run in ("first", "again"):
            assert set(ins[run]["ir"]) == set(MODES)
            assert ins[run]["callsite_added_ir"] == ins[run]["ir"]["callsite"] - ins[run]["ir"]["none"]


def test_the_mlir_result_file_reports_one_and_new_contexts_by_clock_and_instructions():
    result = _committed("mlir-contexts-py3.11.json", "mlir", "bench_mlir.py")
    measured = result["bindings"]["iree.compiler.ir"]
    assert measured["mlir_walk_skipped"] is None
    _check_contexts(measured["contexts_s_per_build"], repeats_at_least=6)
    _check_instructions(measured["contexts_ir_per_build"])
    assert set(measured["contexts_ir_per_build"]["sizes"]) == \
        set(measured["contexts_s_per_build"]["sizes"])


# --- short runs of the benchmarks themselves --------------------------------------------------

def _run(script, *args, timeout=600):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, str(BENCH / script), *args], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_mlir_contexts_run_writes_both_cases(tmp_path):
    ir = pytest.importorskip("iree.compiler.ir", reason="the cold MLIR case runs on iree's bindings")
    import bench_mlir

    why = bench_mlir.mlir_walk_refusal(ir, ir.Context)
    if why:  # the benchmark then measures (a) alone: there is no walk to compare with
        pytest.skip(f"iree's bindings here: {why}")
    out = tmp_path / "mlir.json"
    text = _run("bench_mlir.py", "--contexts", "--no-callgrind", "--builds", "1",
                "--kernel-ops", "60", "--json", str(out))
    assert "one Context" in text and "new Context" in text
    result = _load(out)
    measured = result["bindings"]["iree.compiler.ir"]
    _check_contexts(measured["contexts_s_per_build"], repeats_at_least=6)
    assert "ops_ns" not in measured  # --contexts runs scenario 5 alone


def test_mlir_kernel_has_the_ops_it_says():
    pytest.importorskip("iree.compiler.ir", reason="bench_mlir builds on MLIR bindings")
    import bench_mlir

    for ops in (40, 60, 400):
        source = bench_mlir.cold_kernel_source(ops)
        per_call = source.split("def level5")[1].split("def kernel")[0].count("arith.")
        assert bench_mlir.cold_kernel_ops(ops) == per_call * 63 + 1


def _short_torch_run(tmp_path, paths):
    """bench_torch.py --paths `paths` on the resnet, 2 repeats: its printout and its rows."""
    pytest.importorskip("torch", reason="the torch benchmark needs torch (the 3.11 bench venv)")
    out = tmp_path / "torch.json"
    text = _run("bench_torch.py", "--paths", paths, "--repeats", "2", "--models",
                "resnet (4x3 blocks)", "--json", str(out))
    return text, _load(out)["rows"]


def test_torch_first_trace_run_writes_first_and_again(tmp_path):
    text, rows = _short_torch_run(tmp_path, "first")
    assert "| first |" in text and "| again |" in text
    assert [r["model"] for r in rows] == ["resnet (4x3 blocks)"]
    _check_first_row(rows[0], repeats_at_least=2)
    # The model is as deep as a model library's at every recorded node.
    assert rows[0]["frames"]["mean"] >= 30


def test_torch_export_and_compile_runs_write_their_rows(tmp_path):
    text, (export, compiled) = _short_torch_run(tmp_path, "export,compile")
    assert "| export |" in text and "stack-trace block skipped" in text
    _check_first_row(export, repeats_at_least=2, path="export")
    _check_compile_row(compiled, repeats_at_least=2)


@pytest.mark.parametrize("args, message", [
    (["--paths", "first", "--repeats", "1"], "at least 2 (a min and a median per mode), got 1"),
    (["--paths", "firstt"], "expected names among first, scoped, make_fx, export, compile "
                            "separated by commas, got 'firstt'"),
])
def test_torch_bad_arguments_are_refused_naming_the_value(args, message):
    pytest.importorskip("torch", reason="bench_torch imports torch")
    done = subprocess.run([sys.executable, str(BENCH / "bench_torch.py"), *args],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert message in done.stderr


def test_the_callgrind_breakdown_takes_a_functions_largest_entry_and_sums_mlirs_constructors():
    import callgrind_breakdown

    best = {
        "callsite::mlir::stack_location(callsite::mlir::ContextCache&, _object*)": 900,
        "callsite::StackWalk::StackWalk(unsigned long)": 100,
        "nanobind::detail::func_create<false, true, X::$_38, mlir::python::mlir::PyNameLocation,"
        " std::string>": 30,
        "nanobind::detail::func_create<false, true, X::$_39, mlir::python::mlir::"
        "PyCallSiteLocation, std::vector>": 50,
    }
    found = callgrind_breakdown.stages(best)
    assert found["location of one op (stack_location)"] == 900
    assert found["  … capture: the stack walk (StackWalk)"] == 100
    assert found["MLIR's Location constructors through the bindings (Location.file / name / "
                 "callsite)"] == 80
    assert found["  … filter decisions (keep_frames; scan_kept on a prefix walk)"] == 0  # absent: reported as none


def test_the_torch_breakdown_splits_the_recording_and_the_python_around_it():
    import callgrind_breakdown

    best = {
        "callsite::torch::(anonymous namespace)::texts_record(_object*, _object* const*, long)":
            3000,
        "callsite::detail::source_lines(_object*)": 1400,
        "callsite::detail::(anonymous namespace)::decode(PyCodeObject*, std::vector<X>*)": 400,
        "callsite::capture(unsigned long, unsigned long)": 200,
        "callsite::detail::capture_py(_object*, _object* const*, long, _object*)": 99,
    }
    rows = dict(callgrind_breakdown.torch_rows(
        callgrind_breakdown.stages(best, callgrind_breakdown.TORCH_STAGES), added=3500))
    assert rows["the native recording (record), inclusive"] == 3000
    assert rows["  … the capture"] == 200
    assert [v for k, v in rows.items() if "the rest" in k] == [1000]
    assert [v for k, v in rows.items() if "Python around it" in k] == [500]


def _readme_costs_table() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("## What it costs", 1)[1].split("\n## ", 1)[0]


def test_the_readme_cost_rows_are_the_committed_result_files():
    """Every row of the README's cost table drawn from a result file is exactly what
    readme_costs.py computes from the committed files, its case on the row (a re-measured file
    without the README following fails here), the cold rows beside their warm ones."""
    import readme_costs

    rows = readme_costs.readme_rows()
    assert len(rows) == 8
    table = _readme_costs_table()
    for row in rows:
        assert row in table, f"README.md's cost table lacks {row!r} (python3 bench/readme_costs.py)"
    assert "first trace in a fresh process" in table and "second trace in that process" in table
    assert "new Context per build" in table and "one `ir.Context`" in table
    # Every row of the table says its case: warm, first/second trace, new Context or rebuilt.
    body = [line for line in table.splitlines() if line.startswith("| ")][1:]
    for line in body:
        case = line.split(" | ")[1]
        assert any(word in case for word in ("warm", "first trace", "second trace", "new Context",
                                             "rebuilt")), line
        assert any(word in case for word in ("wall time", "CPU time", "instructions")), line
        assert re.search(r"3\.1\d", case), f"no Python version on {line!r}"


def test_a_changed_result_file_changes_the_readme_rows(tmp_path):
    """The check above can fail: a re-measured file (here, callsite's capture twice as slow on
    one version) gives a row the README does not have."""
    import readme_costs

    folder = tmp_path / "benchmarks"
    shutil.copytree(REPO / "docs" / "_data" / "benchmarks", folder)
    path = folder / "capture-py3.12.json"
    result = _load(path)
    result["tables"]["capture"]["20"]["callsite (internal)"]["ns"] *= 2
    path.write_text(json.dumps(result), encoding="utf-8")
    changed = readme_costs.readme_rows(str(folder))
    assert changed[0] not in _readme_costs_table()
    assert changed[1:] == readme_costs.readme_rows()[1:]


def test_the_dsl_row_leaves_out_differences_below_the_clocks_resolution():
    import readme_costs

    run = {"meta": {"python": "3.11.7"}, "measure": "seconds_per_build", "dsls": {
        "big": {"label": "big", "seconds_per_build": {"none": 1.0, "mlir": 3.0, "callsite": 1.1}},
        "small": {"label": "small (dry-run)",
                  "seconds_per_build": {"none": 1.0, "mlir": 1.5, "callsite": 1.01}},
        "gone": {"label": "gone", "skipped": "not installed"}}}
    row = readme_costs.dsl_row(run)
    assert "design: big |" in row
    assert row.endswith("| 20× less (small: callsite adds 1.0% of a build, below what the clock "
                        "resolves) |")
    assert "gone" not in row


def test_the_memory_benchmark_reports_every_mode(tmp_path):
    """bench_cold_memory.py: the RSS of each mode after the first and the last tracer, in a
    process of its own, and what callsite still caches (a short run: no figure is asserted)."""
    pytest.importorskip("torch")
    out = tmp_path / "memory.json"
    subprocess.run([sys.executable, str(BENCH / "bench_cold_memory.py"), "--torch",
                    "--tracers", "3", "--json", str(out)], check=True, capture_output=True,
                   text=True, timeout=600)
    result = _load(out)
    _check_meta(result, "bench_cold_memory.py")
    modes = {row["mode"]: row for row in result["torch"]["modes"]}
    assert set(modes) == {"none", "torch", "callsite"}
    for mode, row in modes.items():
        assert [n for n, _ in row["samples_kib"]][0] == 1 and row["samples_kib"][-1][0] == 3
        assert row["growth"]["rss_last_kib"] > 0
        assert (row["recorded_nodes_first"] > 0) == (mode != "none"), (mode, row)
    assert modes["callsite"]["callsite_cached_texts"] is not None


def test_the_memory_benchmark_refuses_a_count_below_two():
    out = subprocess.run([sys.executable, str(BENCH / "bench_cold_memory.py"), "--tracers", "1"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2 and "--tracers and --contexts: expected at least 2, got 1" in out.stderr
