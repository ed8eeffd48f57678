"""A loop interpreter (examples/interpreters/loop.py: guest frames in its own list, no Python
call per guest call) puts its guest call stack into callsite's captures and into the
tracebacks of exceptions raised at any guest depth, with NativeFrame.push()/pop(exc).

The oracle is the guest program's own text (the line of each instruction) and CPython's
`traceback` module on the same exception."""
import importlib.util
import sys
import traceback

import pytest

import callsite
from callsite import native
from where import REPO

_spec = importlib.util.spec_from_file_location(
    "callsite_examples_loop", REPO / "examples" / "interpreters" / "loop.py")
loop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(loop)

FILENAME = "prog.loop"
LINES = loop.PROGRAM.splitlines()


def line_of(text, after=None):
    """The 1-based line of the instruction `text` (the first one after line `after`)."""
    start = 0 if after is None else after
    return next(i for i, line in enumerate(LINES[start:], start + 1) if line.strip() == text)


FACT = line_of("fn fact n")
COUNTDOWN = line_of("fn countdown n")
FACT_CALL, FACT_PROBE = line_of("call fact 1", FACT), line_of("host probe 1", FACT)
CD_CALL, CD_DIV = line_of("call countdown 1", COUNTDOWN), line_of("div", COUNTDOWN)


@pytest.fixture
def functions():
    return loop.parse(loop.PROGRAM, FILENAME)


def guest(tb):
    return [(f.name, f.lineno) for f in tb if f.kind == "native"]


def test_capture_at_depth_lists_every_guest_activation_innermost_first(functions):
    seen = []

    def probe(n):
        seen.append(callsite.capture())
        return n

    assert loop.run(functions, "fact", [4.0], {"probe": probe}) == 24.0
    [tb] = seen
    assert guest(tb) == [("fact", FACT_PROBE)] + [("fact", FACT_CALL)] * 3
    kinds = [f.kind for f in tb]
    # probe, then the four guest frames, then run (the loop), then this test
    assert kinds[:6] == ["python"] + ["native"] * 4 + ["python"]
    assert (tb[0].name, tb[5].name) == ("probe", "run")
    assert tb[6].name == "test_capture_at_depth_lists_every_guest_activation_innermost_first"
    assert {f.filename for f in tb if f.kind == "native"} == {FILENAME}
    assert [f.state for f in tb[1:5]] == [functions["fact"].lines.index(FACT_PROBE)] + \
        [functions["fact"].lines.index(FACT_CALL)] * 3
    assert native.stack() == []  # every activation popped by its guest return


def test_exception_raised_by_the_loop_at_depth_lists_the_guest_frames(functions):
    with pytest.raises(ZeroDivisionError) as info:
        loop.run(functions, "countdown", [3.0], {})
    entries = [(fs.filename, fs.lineno, fs.name)
               for fs in traceback.extract_tb(info.value.__traceback__)]
    run_at = [name for _, _, name in entries].index("run")
    assert entries[run_at + 1:] == [(FILENAME, CD_CALL, "countdown")] * 3 + \
        [(FILENAME, CD_DIV, "countdown")]
    assert native.stack() == []


def test_exception_from_a_host_function_at_depth_keeps_the_host_frame_innermost(functions):
    def probe(n):
        raise LookupError("from the host")

    with pytest.raises(LookupError) as info:
        loop.run(functions, "fact", [3.0], {"probe": probe})
    names = [(fs.name, fs.lineno) for fs in traceback.extract_tb(info.value.__traceback__)]
    run_at = [n for n, _ in names].index("run")
    assert names[run_at + 1:-1] == [("fact", FACT_CALL)] * 2 + [("fact", FACT_PROBE)]
    assert names[-1][0] == "probe"
    text = "".join(traceback.format_exception(info.value))
    assert text.index("in run\n") < text.index(f'"{FILENAME}", line {FACT_PROBE}, in fact') \
        < text.index("in probe\n")


def test_recursion_deeper_than_pythons_limit_is_one_python_frame(functions):
    # Guest depth costs no Python frame: 3,000 activations under a recursion limit of 1,000.
    seen = []

    def probe(n):
        seen.append(callsite.capture())
        return n

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        loop.run(functions, "fact", [3000.0], {"probe": probe})
    finally:
        sys.setrecursionlimit(limit)
    assert len(guest(seen[0])) == 3000


def test_getframe_tools_see_the_loop_and_not_the_guest_frames(functions):
    """What sys._getframe-based tools can see: the guest frames are not interpreter frames,
    so traceback.extract_stack() (and inspect, faulthandler, py-spy) show run(), where the
    guest call stack is, and nothing of it."""
    seen = []

    def probe(n):
        seen.append([f.name for f in traceback.extract_stack()])
        return n

    loop.run(functions, "fact", [3.0], {"probe": probe})
    assert seen[0][-2:] == ["run", "probe"]
    assert "fact" not in seen[0]


def test_pop_with_an_exception_validates_it_and_pops_anyway(functions):
    frame = native.NativeFrame(functions["fact"].executable)
    frame.push()
    with pytest.raises(TypeError, match="exc must be an exception instance or None, not int"):
        frame.pop(3)
    assert frame.active  # nothing changed
    frame.pop(exc=None)
    assert not frame.active
    with pytest.raises(TypeError, match="takes one optional argument"):
        frame.pop(None, None)


def test_pop_with_an_exception_outside_any_traceback_prepends_the_entry(functions):
    # An exception not raised yet (no traceback): the entry becomes its whole traceback.
    exc = ValueError("made, not raised")
    frame = native.NativeFrame(functions["countdown"].executable, 2)
    frame.push()
    frame.pop(exc)
    [entry] = traceback.extract_tb(exc.__traceback__)
    assert (entry.filename, entry.lineno, entry.name) == (FILENAME, functions["countdown"].lines[2],
                                                         "countdown")


def test_generator_exit_gets_no_entry(functions):
    exc = GeneratorExit()
    frame = native.NativeFrame(functions["countdown"].executable)
    frame.push()
    frame.pop(exc)
    assert exc.__traceback__ is None


def test_each_activation_shows_its_own_variables(functions):
    """Per-activation locals: each guest activation's NativeFrame reads its own `vars`."""
    seen = []

    def probe(n):  # a capture's entries read the live activations: read while they run
        seen.append([f.locals for f in callsite.capture() if f.kind == "native"])
        return n

    original = loop.Activation.__init__

    def with_locals(self, fn, args):
        original(self, fn, args)
        self.native.locals = self.vars  # a mapping read lazily, frozen at the pop

    loop.Activation.__init__ = with_locals
    try:
        loop.run(functions, "fact", [3.0], {"probe": probe})
        with pytest.raises(ZeroDivisionError) as info:
            loop.run(functions, "countdown", [2.0], {})
    finally:
        loop.Activation.__init__ = original
    assert seen[0] == [{"n": 1.0}, {"n": 2.0}, {"n": 3.0}]
    summary = traceback.TracebackException.from_exception(info.value, capture_locals=True)
    guest_vars = [fs.locals for fs in summary.stack if fs.filename == FILENAME]
    assert guest_vars == [{"n": "2.0"}, {"n": "1.0"}, {"n": "0.0"}]


def test_the_example_runs_as_a_script(capsys):
    assert loop.main() == 0
    out = capsys.readouterr().out
    assert "fact(4) = 24.0" in out
    assert f'File "{FILENAME}", line {FACT_PROBE}, in fact' in out
    assert f'File "{FILENAME}", line {CD_DIV}, in countdown' in out
    assert "ZeroDivisionError" in out


@pytest.mark.skipif(not native.visible_frames_available(),
                    reason=f"visible frames: {native.visible_frames_refusal()}")
def test_a_host_call_through_nested_framed_calls_is_seen_by_getframe_tools():
    """docs/native.md: a loop interpreter can run one host call inside interpreter frames of
    its activations, outermost first, for the tools that walk sys._getframe."""
    main = native.Executable("main", kind="loop", visible=True,
                             locations=[native.Location(FILENAME, 1, name="main")])
    leaf = native.Executable("leaf", kind="loop", visible=True,
                             locations=[native.Location(FILENAME, 4, name="leaf")])

    def host():
        return [(fs.filename, fs.lineno, fs.name) for fs in traceback.extract_stack()][-3:]

    assert native.frame(main, 0)(native.frame(leaf, 0)(host))() == [
        (FILENAME, 1, "main"), (FILENAME, 4, "leaf"), (__file__, host.__code__.co_firstlineno + 1,
                                                       "host")]
