"""The benchmarks' output options: a folder for kept files is created when missing and refused
before the run when it cannot be, or when another option discards what it would keep; a
benchmark that needs the test-only module says how to build it. Nothing is measured here."""
import os
import subprocess
import sys

import pytest

from where import REPO  # noqa: E402
BENCH = REPO / "bench"

sys.path.insert(0, str(BENCH))


def _run(*args, timeout=120):
    return subprocess.run([sys.executable, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_a_missing_output_folder_is_created(tmp_path):
    import _common

    folder = tmp_path / "kept" / "callgrind"
    assert _common.output_dir(str(folder)) == str(folder)
    assert folder.is_dir()
    assert _common.output_dir(str(folder)) == str(folder)  # an existing one is taken as it is


def test_an_output_folder_that_is_a_file_is_refused(tmp_path):
    import argparse

    import _common

    (tmp_path / "taken").write_text("", encoding="utf-8")
    with pytest.raises(argparse.ArgumentTypeError, match="expected a folder, got the file"):
        _common.output_dir(str(tmp_path / "taken"))


@pytest.mark.parametrize("option, value, expected", [
    ("--repeats", "0", "expected an integer >= 1, got '0'"),
    ("--depths", "5,x", "expected integers >= 1 separated by commas, got '5,x'"),
    ("--tables", "capture,hot", "expected names among capture, warm, cold"),
])
def test_bad_options_are_named_with_what_was_expected(option, value, expected):
    done = _run(BENCH / "bench_capture.py", option, value)
    assert done.returncode == 2, done.stderr
    assert f"argument {option}: {expected}" in done.stderr


def test_every_result_file_has_one_schema(tmp_path):
    import _common

    out = tmp_path / "r.json"
    _common.write_results(str(out), "example", {"rows": []})
    import json

    written = json.loads(out.read_text(encoding="utf-8"))
    assert list(written) == ["bench", "meta", "rows"]
    assert set(written["meta"]) == {"date", "finished", "machine", "python", "callsite", "commit",
                                    "command"}
    assert set(written["meta"]["machine"]) == {"cpu", "cores", "memory_gib",
                                               "load_average_at_start"}


def test_the_run_metadata_names_the_commit_measured():
    from callsite._cli.results import run_metadata

    commit = run_metadata(str(REPO))["commit"]
    if commit is None:
        pytest.skip("not a git checkout (or no git here)")
    head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=12", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert commit.split("-")[0] == head


def test_mlir_keep_callgrind_with_no_callgrind_is_refused_before_the_run(tmp_path):
    done = _run(BENCH / "bench_mlir.py", "--contexts", "--no-callgrind", "--keep-callgrind",
                tmp_path / "kept")
    assert done.returncode == 2, done.stderr
    assert "--keep-callgrind keeps the files of the instruction counts" in done.stderr


def test_mlir_keep_callgrind_into_a_file_is_refused(tmp_path):
    (tmp_path / "taken").write_text("", encoding="utf-8")
    done = _run(BENCH / "bench_mlir.py", "--contexts", "--keep-callgrind", tmp_path / "taken")
    assert done.returncode == 2, done.stderr
    assert "expected a folder, got the file" in done.stderr


def test_torch_keep_callgrind_without_counting_is_refused_before_the_run(tmp_path):
    pytest.importorskip("torch", reason="bench_torch imports torch")
    done = _run(BENCH / "bench_torch.py", "--paths", "first", "--keep-callgrind", tmp_path / "kept")
    assert done.returncode == 2, done.stderr
    assert "--keep-callgrind keeps the files of --callgrind or --callgrind-only" in done.stderr


def test_interp_keep_callgrind_with_no_callgrind_is_refused(tmp_path):
    done = _run(BENCH / "bench_interp.py", "--keep-callgrind", tmp_path / "kept", "--no-callgrind")
    assert done.returncode == 2, done.stderr
    assert "--keep-callgrind keeps the files of the instruction counts" in done.stderr


def test_a_json_file_into_a_missing_folder_is_refused_before_the_run(tmp_path):
    done = _run(BENCH / "bench_capture.py", "--json", tmp_path / "missing" / "out.json")
    assert done.returncode == 2, done.stderr
    assert "does not exist" in done.stderr


# The test-only module hidden, as in an installation made by `pip install .`.
WITHOUT_TESTING = ("import runpy, sys; sys.modules['callsite._callsite_testing'] = None; "
                   "sys.argv = [{script!r}, *sys.argv[1:]]; "
                   "runpy.run_path({script!r}, run_name='__main__')")


def test_native_bench_without_the_testing_module_says_how_to_build_it():
    script = str(BENCH / "bench_native.py")
    done = _run("-c", WITHOUT_TESTING.format(script=script), "--quick")
    assert done.returncode == 1, done.stderr
    assert "needs callsite._callsite_testing" in done.stderr
    assert "pip install .` leaves out" in done.stderr
    assert "cmake -S . -B build/dev" in done.stderr
    assert "-C cmake.define.CALLSITE_TESTING=ON" in done.stderr
    # --help does not need the module
    helped = _run("-c", WITHOUT_TESTING.format(script=script), "--help")
    assert helped.returncode == 0 and "--no-callgrind" in helped.stdout, helped.stderr
