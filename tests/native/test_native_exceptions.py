"""Exceptions leaving native frames get a traceback entry for the DSL location, between the
Python frames, as the traceback module prints it. The oracle is CPython's own traceback of
the same code run without the native frame: the entries must be exactly those plus ours."""
import sys
import traceback
import warnings

import pytest

from callsite import native
from callsite._calc import Program as CalcProgram

DSL_SOURCE = "op0 = load x\nop1 = mul op0, 2\nop2 = call helper(op1)\n"


@pytest.fixture
def dsl(tmp_path):
    path = tmp_path / "kernel.dsl"
    path.write_text(DSL_SOURCE)
    exe = native.Executable("kernel", lambda pc: native.Location(str(path), pc + 1))
    return exe, str(path)


def entries(exc):
    return [(fs.filename, fs.lineno, fs.name) for fs in traceback.extract_tb(exc.__traceback__)]


def raise_value_error():
    raise ValueError("boom")


def run(frame=None, state=0):
    if frame is None:
        raise_value_error()
    with frame.frame(state):
        raise_value_error()


def caught(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the tests look at whatever was raised
        return e
    raise AssertionError("nothing raised")


def test_with_block_entry_between_the_python_frames(dsl):
    exe, path = dsl
    plain, framed = caught(run), caught(run, exe, 2)
    expected = entries(plain)
    run_at = [e[0:3:2] for e in expected].index((__file__, "run"))
    expected[run_at] = (__file__, expected[run_at][1] + 2, "run")  # the with's inner line
    expected.insert(run_at + 1, (path, 3, "kernel"))
    assert entries(framed) == expected
    text = "".join(traceback.format_exception(type(framed), framed, framed.__traceback__))
    assert f'  File "{path}", line 3, in kernel\n    op2 = call helper(op1)\n' in text
    assert text.index('in run\n') < text.index("in kernel") < text.index("in raise_value_error")
    assert str(framed) == "boom"


def test_nested_frames_in_one_function(dsl):
    exe, path = dsl
    other = native.Executable("outer_op", lambda pc: ("outer.dsl", 10 + pc))

    def nested():
        with other.frame(1):
            with exe.frame(0):
                raise_value_error()

    names = [e[2] for e in entries(caught(nested))]
    assert names[-4:] == ["nested", "outer_op", "kernel", "raise_value_error"]


def test_raise_inside_the_block(dsl):
    exe, path = dsl

    def direct():
        with exe.frame(1):
            raise KeyError("k")

    got = entries(caught(direct))
    assert got[-2][2] == "direct" and got[-1] == (path, 2, "kernel")


def test_exception_caught_inside_leaves_no_entry(dsl):
    exe, _ = dsl

    def swallow():
        with exe.frame(0):
            try:
                raise_value_error()
            except ValueError:
                pass
        raise_value_error()

    assert "kernel" not in [e[2] for e in entries(caught(swallow))]


def test_decorated_function(dsl):
    exe, path = dsl

    @native.frame(exe, 1)
    def decorated():
        raise_value_error()

    def caller():
        decorated()

    names = [e[2] for e in entries(caught(caller))]
    assert names[-4:] == ["caller", "kernel", "decorated", "raise_value_error"]
    assert (path, 2, "kernel") in entries(caught(caller))


def test_entries_share_one_empty_code_object_per_file_name_and_first_line(dsl):
    exe, path = dsl
    a, b = caught(run, exe, 0), caught(run, exe, 2)

    def native_tb(exc):
        tb = exc.__traceback__
        while tb.tb_frame.f_code.co_name != "kernel":
            tb = tb.tb_next
        return tb

    ta, tb_ = native_tb(a), native_tb(b)
    if sys.version_info >= (3, 13):
        # cached per (file, name, line): each code's first line is its entry's line, where
        # inspect's block for it starts
        assert ta.tb_frame.f_code is not tb_.tb_frame.f_code
        assert ta.tb_frame.f_code is native_tb(caught(run, exe, 0)).tb_frame.f_code
        assert (ta.tb_frame.f_code.co_firstlineno, tb_.tb_frame.f_code.co_firstlineno) == (1, 3)
    else:
        assert ta.tb_frame.f_code is tb_.tb_frame.f_code  # cached per (file, name)
    assert ta.tb_frame is not tb_.tb_frame
    assert (ta.tb_lineno, tb_.tb_lineno) == (1, 3)
    code = ta.tb_frame.f_code
    assert (code.co_filename, code.co_name) == (path, "kernel")
    if sys.version_info >= (3, 11):
        # No positions of its own (jax#16027: never a real code object under a fake frame).
        assert {p for p in code.co_positions()} == {(None, None, None, None)}


def test_failing_reifier_keeps_the_original_exception():
    exe = native.Executable("bad", lambda pc: {"not": "a location"})
    with pytest.warns(native.ReificationWarning, match="got dict"):
        e = caught(run, exe, 0)
    assert isinstance(e, ValueError) and str(e) == "boom"
    got = entries(e)
    unknown = None if sys.version_info >= (3, 11) else -1  # how tb_lineno -1 reads back
    assert got[-2] == ("<python:bad>", unknown, "bad")
    assert got[-1][2] == "raise_value_error"


def test_reifier_error_as_error_is_unraisable_not_lost(monkeypatch):
    exe = native.Executable("worse", lambda pc: 1 / 0)
    seen = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append(u.exc_type))
    with warnings.catch_warnings():
        warnings.simplefilter("error", native.ReificationWarning)
        e = caught(run, exe, 0)
    assert isinstance(e, ValueError) and str(e) == "boom"
    assert seen == [native.ReificationWarning]
    assert entries(e)[-1][2] == "raise_value_error"


def test_generator_exit_is_not_annotated(dsl):
    exe, _ = dsl
    closed = []

    def gen():
        with exe.frame(0):
            try:
                yield
            except GeneratorExit as e:
                closed.append(e)
                raise

    g = gen()
    next(g)
    g.close()
    assert "kernel" not in [e[2] for e in entries(closed[0])]


def test_exception_out_of_a_generator(dsl):
    exe, path = dsl

    def gen():
        with exe.frame(1):
            yield 1
            raise_value_error()

    def drive():
        for _ in gen():
            pass

    names = [e[2] for e in entries(caught(drive))]
    assert names[-4:] == ["drive", "gen", "kernel", "raise_value_error"]


def test_calc_interpreter_traceback(tmp_path):
    source = "fn leaf(x)\n  return cb(x * 2)\nend\n\nfn top(x)\n  let y = leaf(x + 1)\n  return y\nend\n"
    path = tmp_path / "prog.calc"
    path.write_text(source)

    def cb(v):
        raise LookupError(v)

    program = CalcProgram(source, str(path), {"cb": cb})
    e = caught(program.call, "top", 1)
    assert isinstance(e, LookupError) and e.args == (4.0,)
    got = entries(e)
    assert got[-3:] == [(str(path), 6, "top"), (str(path), 2, "leaf"), (__file__, got[-1][1], "cb")]
    assert got[-4][2] == "caught"
    text = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    assert "    let y = leaf(x + 1)\n" in text and "    return cb(x * 2)\n" in text


def test_calc_error_raised_by_the_interpreter():
    program = CalcProgram("fn f(x)\n  let y = 1\n  return x / (y - 1)\nend\n", "<div>")
    e = caught(program.call, "f", 3)
    assert isinstance(e, ZeroDivisionError)
    assert entries(e)[-1] == ("<div>", 3, "f")
