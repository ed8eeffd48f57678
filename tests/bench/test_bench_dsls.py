"""bench/bench_dsls.py: its ratio table and its argument checks (the benchmark itself runs
real DSLs for minutes and is not part of the suite)."""
import os
import subprocess
import sys

import pytest

from where import REPO  # noqa: E402

BENCH = os.path.join(REPO, "bench")
sys.path.insert(0, BENCH)
import bench_dsls  # noqa: E402


def _row(text, label):
    return next(line for line in text.splitlines() if line.startswith(f"| {label} |"))


def test_instruction_table_gives_per_op_counts_and_ratios_of_added_cost():
    results = {
        "pycde_design": {"ops": 10, "instructions_per_build": {
            "none": 10_000, "own": 30_000, "mlir": 12_000, "callsite": 10_100}},
        "iree_design": {"skipped": "iree-base-compiler not installed"},
    }
    text = bench_dsls.table(results, "instructions_per_build")
    assert "(a) none, Ir/op" in text
    cells = [c.strip() for c in _row(text, "pycde").split("|")[1:-1]]
    assert cells == ["pycde", "10", "1,000", "3,000", "1,200", "1,010", "1.010", "20.0x", "200.0x"]
    assert "skipped: iree-base-compiler not installed" in _row(text, "iree")


def test_callsite_adding_nothing_is_said_not_divided_by():
    results = {"jaxlib_design": {"ops": 4, "seconds_per_build": {
        "none": 0.010, "mlir": 0.020, "callsite": 0.009}}}
    cells = [c.strip() for c in _row(bench_dsls.table(results), "jaxlib.mlir").split("|")[1:-1]]
    assert cells[2:6] == ["10.00", "none", "20.00", "9.00"]
    assert cells[7].startswith("n/a")


@pytest.mark.parametrize("option, value, expected", [
    ("--repeats", "0", "argument --repeats: expected an integer >= 1, got '0'"),
    ("--builds", "0", "argument --builds: expected an integer >= 1, got '0'"),
    ("--seconds", "0", "--seconds: expected a time > 0, got 0.0"),
])
def test_bad_counts_are_refused_with_the_values_given(option, value, expected):
    done = subprocess.run([sys.executable, os.path.join(BENCH, "bench_dsls.py"), option, value],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert expected in done.stderr
