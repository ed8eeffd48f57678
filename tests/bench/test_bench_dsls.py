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
    return next(line for line in text.splitlines() if line.split("|")[1].strip() == label)


def _payload(measure, dsls):
    return {"python": "3.11.7", "measure": measure, "dsls": {
        name: {"label": bench_dsls.DESIGNS[name][0], **r} for name, r in dsls.items()}}


def test_instruction_table_gives_per_op_counts_and_ratios_of_added_cost():
    text = bench_dsls.table(_payload("instructions_per_build", {
        "pycde_design": {"ops": 10, "instructions_per_build": {
            "none": 10_000, "own": 30_000, "mlir": 12_000, "callsite": 10_100}},
        "iree_design": {"skipped": "iree-base-compiler not installed"}}))
    assert "(a) none, Ir/op" in text
    cells = [c.strip() for c in _row(text, "pycde (3.11)").split("|")[1:-1]]
    assert cells == ["pycde (3.11)", "10", "1,000", "3,000", "1,200", "1,010", "1.010", "20.0×",
                     "200×"]
    assert "not measured: iree-base-compiler not installed" in _row(text, "iree (3.11)")


def test_callsite_adding_nothing_is_said_not_divided_by():
    text = bench_dsls.table(_payload("instructions_per_build", {"jaxlib_design": {
        "ops": 4, "instructions_per_build": {"none": 400, "mlir": 800, "callsite": 396}}}))
    cells = [c.strip() for c in _row(text, "jaxlib.mlir (3.11)").split("|")[1:-1]]
    assert cells[2:6] == ["100", "—", "200", "99"]
    assert cells[7] == "callsite adds nothing measurable"


def test_a_timed_difference_below_the_clock_is_marked_not_divided():
    text = bench_dsls.table(_payload("seconds_per_build", {"jaxlib_design": {
        "ops": 4, "seconds_per_build": {"none": 0.010, "mlir": 0.020, "callsite": 0.0101}}}))
    cells = [c.strip() for c in _row(text, "jaxlib.mlir (3.11)").split("|")[1:-1]]
    assert cells[2:6] == ["10.00", "—", "20.00", "10.10"]
    assert cells[7].startswith("below the clock's resolution (callsite's part: 1.0% of a build)")


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
