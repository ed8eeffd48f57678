"""Visible native frames where CPython and callsite could disagree or crash: running the
synthetic code object a frame walk reaches, assigning a visible frame's f_lineno, building the
code while reifiers (or other threads) reify other states, names with NUL, and the co_flags bit
that marks synthetic code. CPython (f_lineno, co_filename, traceback) is the oracle."""
from __future__ import annotations

import gc
import random
import subprocess
import sys
import textwrap
import threading
import traceback
import types
import warnings

import pytest

import callsite
from callsite import native

SUPPORTED = sys.version_info[:2] in ((3, 12), (3, 13), (3, 14), (3, 15)) and \
    native.visible_frames_available()
visible_only = pytest.mark.skipif(not SUPPORTED, reason="no visible-frame implementation here")

#: callsite's co_flags bit of synthetic code (src/layouts/visible_frame.h).
SYNTHETIC_FLAG = 0x40000000


def run_child(source: str) -> subprocess.CompletedProcess[str]:
    """Runs `source` in a fresh interpreter (a crash must not take pytest with it)."""
    return subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, timeout=120)


@visible_only
def test_running_the_synthetic_code_object_returns_none():
    """exec/eval/a function made from a visible frame's code, and from a code.replace() copy,
    run its body (return None) instead of running off the end of the code."""
    result = run_child("""
        import sys, types
        from callsite import native
        exe = native.Executable("kernel", kind="dsl", visible=True,
                                locations=[native.Location("prog.dsl", 3),
                                           native.Location("prog.dsl", 4, colno=2, end_colno=14)])
        code = native.frame(exe, 1)(lambda: sys._getframe(1).f_code)()
        assert code.co_name == "kernel", code
        results = [exec(code, {}), eval(code, {}), types.FunctionType(code, {})(),
                   exec(code.replace(), {}), types.FunctionType(code.replace(), {})(),
                   eval(code, {"__builtins__": {}})]
        print(results)
        # The frame still shows its state's line afterwards.
        print(native.frame(exe, 1)(lambda: sys._getframe(1).f_lineno)())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == [str([None] * 6), "4"]


def _assign_lineno_from_a_trace_function(exe, state, new_line):
    """Inside a visible frame of `exe` at `state`: a trace function assigns the frame's
    f_lineno. Returns (what the assignment did, the frame's f_lineno, its traceback line,
    callsite's capture line)."""
    def callback():
        frame = sys._getframe(1)
        outcome = []

        def tracer(f, event, arg):
            if event == "line" and not outcome:
                try:
                    frame.f_lineno = new_line
                    outcome.append("moved")
                except ValueError as e:
                    outcome.append(str(e))
            return tracer

        sys._getframe().f_trace = tracer
        sys.settrace(tracer)
        try:
            _ = 1  # a line event
        finally:
            sys.settrace(None)
        stack_line = traceback.extract_stack(frame, limit=1)[0].lineno
        captured = [f for f in callsite.capture() if f.name == "kernel"][0].lineno
        return outcome, frame.f_lineno, stack_line, captured

    return native.frame(exe, state)(callback)()


@visible_only
def test_assigning_f_lineno_of_a_visible_frame_is_refused():
    """CPython lets a trace function assign f_lineno; for a visible frame the assignment is
    refused (CPython's own check: the states' instructions are unreachable), so CPython's line
    and callsite's capture keep agreeing."""
    exe = native.Executable("kernel", kind="dsl", visible=True,
                            locations=[native.Location("prog.dsl", 3),
                                       native.Location("prog.dsl", 4),
                                       native.Location("prog.dsl", 5)])
    for state, target in ((1, 3), (1, 5), (2, 4), (0, 5)):
        outcome, line, stack_line, captured = _assign_lineno_from_a_trace_function(
            exe, state, target)
        assert outcome == ["can't jump from unreachable code"]
        assert line == stack_line == captured == 3 + state


def _check_every_state_line(exe, states, line_of):
    """Every state of a visible executable reads its own line through CPython's f_lineno."""
    def callback():
        frame, me = sys._getframe(1), native.current()
        wrong = []
        for state in range(states):
            me.state = state
            if frame.f_lineno != line_of(state):
                wrong.append((state, frame.f_lineno))
        return wrong

    wrong = native.frame(exe, 0)(callback)()
    assert wrong[:5] == [] and len(wrong) == 0


@visible_only
def test_reifier_that_reifies_other_states_while_the_code_is_built():
    """The build reifies states 0..8191; halfway, the reifier reifies enough other states to
    turn the cache over twice: every state still gets its own line (the build keeps copies, not
    pointers into the cache)."""
    states, churn = 8192, 2 * native.cache_info()["generation"] + 10

    def where(state):
        if state == states // 2 and not done:
            done.append(True)
            for other in range(states, states + churn):
                exe.reify(other)
        return native.Location("re.dsl", state + 1 if state < states else 100_000)

    done: list[bool] = []
    exe = native.Executable("churn", where, kind="dsl", visible=True, states=states)
    _check_every_state_line(exe, states, lambda s: s + 1)
    assert done


@visible_only
def test_another_thread_reifies_while_the_code_is_built():
    """Halfway through the build, the reifier waits for another thread that reifies enough
    other states of the executable to turn the cache over twice."""
    states, churn = 8192, 2 * native.cache_info()["generation"] + 10

    def other_thread():
        for other in range(states, states + churn):
            exe.reify(other)

    def where(state):
        if state == states // 2 and not done:
            done.append(True)
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
        return native.Location("thr.dsl", state + 1 if state < states else 100_000)

    done: list[bool] = []
    exe = native.Executable("threads", where, kind="dsl", visible=True, states=states)
    _check_every_state_line(exe, states, lambda s: s + 1)
    assert done


def test_location_refuses_a_file_name_with_nul():
    with pytest.raises(ValueError, match=r"Location filename must not contain a NUL"):
        native.Location("a\x00b.dsl", 3)


@visible_only
def test_a_file_name_with_nul_reads_the_same_to_cpython_and_callsite():
    """A reifier's plain tuple with NUL in the file name is refused (a placeholder and a
    ReificationWarning), so CPython's view of the frame and callsite's capture show the same
    placeholder file; a NUL in the executable's name is kept whole by both."""
    exe = native.Executable("k\x00ernel", lambda s: ("a\x00b.dsl", 3 + s), kind="dsl",
                            visible=True, states=2)

    def callback():
        frame = sys._getframe(1)
        captured = [f for f in callsite.capture() if f.kind == "native"][0]
        return frame.f_code, captured, traceback.extract_stack(frame, limit=1)[0]

    with pytest.warns(native.ReificationWarning, match="filename must not contain a NUL"):
        code, captured, summary = native.frame(exe, 1)(callback)()
    assert code.co_filename == captured.filename == summary.filename == "<dsl:k\x00ernel>"
    assert code.co_name == captured.name == summary.name == "k\x00ernel"
    assert code.co_qualname == "k\x00ernel"


def test_shadow_traceback_entry_with_nul_in_the_names():
    """The traceback entry of a shadow frame (a fresh code object per file and name) keeps an
    executable name with NUL whole, as callsite's captures show it; a file name with NUL is
    refused as in a visible frame."""
    exe = native.Executable("sh\x00adow", lambda s: ("x\x00y.dsl", 7), kind="dsl")

    def fail():
        raise KeyError("boom")

    with pytest.warns(native.ReificationWarning, match="filename must not contain a NUL"):
        with pytest.raises(KeyError) as info:
            native.frame(exe, 0)(fail)()
    entries = traceback.extract_tb(info.value.__traceback__)
    native_entries = [e for e in entries if e.name == "sh\x00adow"]
    assert [e.filename for e in native_entries] == ["<dsl:sh\x00adow>"]
    assert exe.reify(0).filename == "<dsl:sh\x00adow>" and exe.reify(0).name == "sh\x00adow"


@pytest.mark.parametrize("backend", ["internal", "public"])
def test_a_python_function_carrying_the_synthetic_flag_stays_in_captures(backend):
    """A plain function whose code carries callsite's synthetic-code co_flags bit (anyone can
    set it with code.replace) is a Python frame, under a shadow native frame too, with either
    walk."""
    def target():
        return [f.name for f in callsite.capture()]

    flagged = types.FunctionType(
        target.__code__.replace(co_flags=target.__code__.co_flags | SYNTHETIC_FLAG),
        globals(), "target")
    shadow = native.Executable("shadow", lambda s: native.Location("shadow.dsl", 1))
    before = callsite.get_backend()
    callsite.set_backend(backend)
    try:
        with shadow.frame(0):
            names = flagged()
    finally:
        callsite.set_backend(before)
    assert names[:3] == ["target", "shadow", "test_a_python_function_carrying_the_synthetic_flag_"
                         "stays_in_captures"], names


@visible_only
def test_a_replaced_copy_of_synthetic_code_is_not_synthetic():
    """code.replace() of a visible frame's code keeps the co_flags bit but not callsite's
    mark: a function running it is a Python frame in captures."""
    exe = native.Executable("kernel", kind="dsl", visible=True,
                            locations=[native.Location("prog.dsl", 3)])
    code = native.frame(exe, 0)(lambda: sys._getframe(1).f_code)()
    assert code.co_flags & SYNTHETIC_FLAG

    def target():
        return callsite.capture()

    copy = target.__code__.replace(co_flags=code.co_flags, co_name="copy")
    shadow = native.Executable("shadow", lambda s: native.Location("shadow.dsl", 1))
    with shadow.frame(0):
        names = [f.name for f in types.FunctionType(copy, globals())()]
    assert names[:2] == ["copy", "shadow"]


@visible_only
def test_with_form_of_a_visible_executable_warns_once():
    exe = native.Executable("kernel", kind="dsl", visible=True,
                            locations=[native.Location("prog.dsl", 3)])
    with pytest.warns(RuntimeWarning, match=r"'kernel' has visible=True.*decorator form") as got:
        with exe.frame(0):
            pass
    assert got[0].filename == __file__
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with exe.frame(0):
            pass
        frame = exe.frame(0)
        frame.push()
        frame.pop()
        native.frame(exe, 0)(lambda: None)()  # the decorator form never warns


@visible_only
def test_with_form_warning_turned_into_an_error_pushes_nothing():
    exe = native.Executable("kernel", kind="dsl", visible=True,
                            locations=[native.Location("prog.dsl", 3)])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        with pytest.raises(RuntimeWarning):
            with exe.frame(0):
                pass
    assert native.stack() == []


@visible_only
def test_synthetic_code_stays_recognised_as_executables_come_and_go():
    """The walker recognises each live executable's code by identity while many others are
    made and destroyed: one native entry per visible frame, no Python entry of its code."""
    rng = random.Random(5)
    exes = [native.Executable(f"e{i}", locations=[native.Location("m.dsl", i + 1)], visible=True)
            for i in range(300)]
    for i in rng.sample(range(300), 150):
        exes[i] = None
    gc.collect()
    exes += [native.Executable(f"f{i}", locations=[native.Location("m.dsl", i + 1)],
                               visible=True) for i in range(200)]
    me = sys._getframe().f_code.co_name
    for exe in exes:
        if exe is None:
            continue
        names = native.frame(exe, 0)(lambda: [f.name for f in callsite.capture(limit=3)])()
        assert names == ["<lambda>", exe.name, me]
