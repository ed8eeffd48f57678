"""The calc interpreter (examples/interp/, C++ with callsite::NativeFrame): captures inside it
show the interpreted program's file, line and columns between the Python frames."""
import gc
import threading
import weakref

import pytest

import callsite
from callsite import native
from callsite._calc import Program as CalcProgram
from callsite._cli.demo_native import PROGRAM

# The demo's program (area, total) and, for the recursion tests, a function of their own.
SOURCE = PROGRAM + """
fn fact(n)
  if n <= 1
    return probe(n)
  end
  return n * fact(n - 1)
end
"""
LINES = SOURCE.splitlines()


def span_of(text):
    """(lineno, colno, end_colno) of `text` in SOURCE (on the one line that holds it): the oracle."""
    [lineno] = [i for i, line in enumerate(LINES, 1) if text in line]
    col = LINES[lineno - 1].index(text)
    return lineno, col, col + len(text)


def program(**host):
    """The program with `host`'s callbacks; total's `check` passes the sum through unless given."""
    return CalcProgram(SOURCE, "prog.calc", {"check": lambda total: total, **host})


def natives(tb):
    return [(f.name, f.lineno, f.colno, f.end_colno) for f in tb if f.kind == "native"]


def test_capture_inside_a_callback_shows_the_calc_call_sites():
    seen = []

    def scale(a):
        seen.append(callsite.capture())
        return a

    assert program(scale=scale).call("total", 2) == 2 + 6
    tb = seen[1]  # area(2, 3)
    assert [f.kind for f in tb[:4]] == ["python", "native", "native", "python"]
    assert tb[0].name == "scale" and tb[3].name == "test_capture_inside_a_callback_shows_the_calc_call_sites"
    assert natives(tb) == [("area", *span_of("scale(a)")),
                           ("total", *span_of("area(i, i + 1)"))]
    assert {f.filename for f in tb if f.kind == "native"} == {"prog.calc"}
    assert [f.state for f in tb[1:3]] != [None, None]


def test_recursion_gets_one_frame_per_level():
    seen = []
    program(probe=lambda n: seen.append(callsite.capture()) or 1).call("fact", 4)
    frames = natives(seen[0])
    assert [f[0] for f in frames] == ["fact"] * 4
    assert frames[0] == ("fact", *span_of("probe(n)"))
    assert frames[1:] == [("fact", *span_of("fact(n - 1)"))] * 3


def test_interpreter_frames_are_popped():
    program(scale=lambda a: a).call("total", 3)
    assert native.stack() == []


def test_reified_lazily_and_cached():
    seen = []
    p = program(scale=lambda a: seen.append(callsite.capture()) or a)
    before = native.cache_info()
    p.call("total", 3)
    assert native.cache_info()["misses"] == before["misses"]  # nothing symbolized yet
    [natives(tb) for tb in seen]
    after = native.cache_info()
    assert after["misses"] - before["misses"] == 2  # two distinct (function, call site) pairs
    assert after["hits"] - before["hits"] == 2 * 3 - 2


def test_traceback_outlives_the_program():
    seen = []
    p = program(scale=lambda a: seen.append(callsite.capture()) or a)
    p.call("total", 1)
    ref = weakref.ref(p)
    del p
    gc.collect()
    assert ref() is None
    assert natives(seen[0])[0] == ("area", *span_of("scale(a)"))


def test_threads_interpret_independently():
    barrier = threading.Barrier(2)
    out = {}

    def probe(n):
        barrier.wait()
        out[threading.get_ident()] = natives(callsite.capture())
        barrier.wait()
        return 1

    p = program(probe=probe)
    t = threading.Thread(target=p.call, args=("fact", 3))
    t.start()
    p.call("fact", 2)
    t.join()
    depths = sorted(len(v) for v in out.values())
    assert depths == [2, 3]


def test_errors():
    with pytest.raises(SyntaxError, match=r"bad.calc: line 3: expected 'end', found 'end of file'"):
        CalcProgram("fn f(x)\n  return x\n", "bad.calc")
    with pytest.raises(NameError, match="'nope' is not defined"):
        CalcProgram("fn f(x)\n  return nope(x)\nend\n").call("f", 1)
    with pytest.raises(RecursionError):
        CalcProgram("fn f(x)\n  return f(x)\nend\n").call("f", 1)
    assert native.stack() == []
    with pytest.raises(TypeError, match="host must be a mapping"):
        CalcProgram(SOURCE, "p.calc", 3)
