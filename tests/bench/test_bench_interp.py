"""bench/bench_interp.py measures what it says: its forms run the same guest program to
the same result, and the number of guest calls it divides by is the number made."""
import sys

import pytest

from callsite import native
from where import REPO

sys.path.insert(0, str(REPO / "bench"))
import bench_interp  # noqa: E402


@pytest.mark.parametrize("n", [0, 1, 2, 10])
def test_the_guest_call_count_is_the_number_of_calls_made(n, monkeypatch):
    made = []
    original = bench_interp.Interp.call

    def counted(self, fn, args):
        made.append(fn.name)
        return original(self, fn, args)

    monkeypatch.setattr(bench_interp.Interp, "call", counted)
    assert bench_interp.run("plain", n) == [0, 1, 1, 2, 3, 5, 8, 13, 21, 34, 55][n]
    assert len(made) == bench_interp.fib_calls(n)


def test_every_form_computes_the_same_and_the_framed_ones_push_a_frame_per_call(monkeypatch):
    bench_interp.check_forms(12)
    seen = []
    original = bench_interp.FramedInterp.exec_block

    def spy(self, body, env):
        seen.append(native.stack())
        return original(self, body, env)

    monkeypatch.setattr(bench_interp.FramedInterp, "exec_block", spy)
    bench_interp.run("framed", 3)  # fib(3) -> fib(2) -> fib(1): three guest frames deep
    assert {name for stack in seen for name, _, _ in stack} == {"fib"}
    assert max(len(stack) for stack in seen) == 3
    assert native.stack() == []  # every guest call's frame popped


def test_the_python_wrapped_form_pushes_no_native_frame(monkeypatch):
    seen = []
    original = bench_interp.FramedInterp.exec_block

    def spy(self, body, env):
        seen.append((native.stack(), type(env.frame)))
        return original(self, body, env)

    monkeypatch.setattr(bench_interp.FramedInterp, "exec_block", spy)
    assert bench_interp.run("python-wrapped", 3) == 2
    assert len(seen) >= bench_interp.fib_calls(3)  # a block per guest call, and the if's
    assert all(stack == [] and kind is bench_interp.PyFrame for stack, kind in seen)


def test_the_lox_forms_compute_fib_the_framed_one_in_a_native_frame_per_guest_call(monkeypatch):
    pytest.importorskip("loxygen", reason="loxygen is installed on 3.12+ only")
    framed_calls = []
    original = native.frame

    def counting(exe, state):
        decorate = original(exe, state)

        def apply(fn):
            framed = decorate(fn)

            def call(*args):
                result = framed(*args)
                framed_calls.append(exe.name)
                return result
            return call
        return apply

    monkeypatch.setattr(native, "frame", counting)
    assert bench_interp.run("lox plain", 10) == 55 and framed_calls == []
    assert bench_interp.run("lox framed", 10) == 55
    assert framed_calls == ["fib"] * bench_interp.fib_calls(10)
    assert native.stack() == []
