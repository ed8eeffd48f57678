"""callsite.tracking next to other tools: cProfile, settrace tracers, coverage, sys.monitoring ids."""
import cProfile
import pstats
import sys
import threading

import pytest

import callsite.tracking as tracking

MODES = [m for m, why in tracking.available_modes().items() if m != "auto" and why is None]
LEGACY_PROFILE_SLOT = sys.version_info < (3, 12)  # cProfile uses sys.monitoring from 3.12


@pytest.fixture(autouse=True)
def clean():
    tracking.disable()
    yield
    tracking.disable()
    sys.setprofile(None)
    sys.settrace(None)
    threading.setprofile(None)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def fib_calls(profiler):
    stats = pstats.Stats(profiler)
    return sum(v[1] for k, v in stats.stats.items() if k[2] == "fib")  # primitive + recursive


def check_window_saw_fib(w):
    assert w[1].callee is fib.__code__ or w[1].code is fib.__code__


@pytest.mark.parametrize("mode", MODES)
def test_cprofile_enabled_first_keeps_working(mode):
    pr = cProfile.Profile()
    pr.enable()
    try:
        with tracking.enable(mode=mode, window=4):
            fib(5)
            w = tracking.window()
        if LEGACY_PROFILE_SLOT and mode == "profile":
            assert sys.getprofile() is pr  # restored to cProfile on disable
        fib(5)
    finally:
        pr.disable()
    check_window_saw_fib(w)
    assert fib_calls(pr) == 2 * 15  # every call seen while chained, and after


@pytest.mark.parametrize("mode", MODES)
def test_cprofile_enabled_after_is_not_broken(mode):
    with tracking.enable(mode=mode, window=4):
        pr = cProfile.Profile()
        pr.enable()
        fib(5)
        try:
            w = tracking.window()
        except RuntimeError as e:
            w = e
        pr.disable()
        covered = tracking.status()["this_thread"]
    assert fib_calls(pr) == 15
    if LEGACY_PROFILE_SLOT and mode == "profile":
        # One profile slot per thread: cProfile took it (and cleared it on disable).
        assert isinstance(w, RuntimeError) and "not tracked" in str(w) and not covered
    else:
        check_window_saw_fib(w)


@pytest.mark.parametrize("mode", MODES)
def test_user_profiler_installed_after_survives_our_disable(mode):
    seen = []

    def user(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code)

    tracking.enable(mode=mode)
    sys.setprofile(user)
    fib(2)
    tracking.disable()
    assert sys.getprofile() is user
    fib(2)
    sys.setprofile(None)
    assert seen.count(fib.__code__) == 6


@pytest.mark.parametrize("mode", MODES)
def test_settrace_tracer_coexists(mode):
    lines = []

    def tracer(frame, event, arg):
        if frame.f_code is fib.__code__ and event == "line":
            lines.append(frame.f_lineno)
        return tracer

    sys.settrace(tracer)
    with tracking.enable(mode=mode, window=4):
        fib(3)
        w = tracking.window()
    sys.settrace(None)
    check_window_saw_fib(w)
    assert lines and set(lines) == {fib.__code__.co_firstlineno + 1}
    assert len(lines) == 5  # one line event per call of fib(3)


@pytest.mark.parametrize("core", ["ctrace", "sysmon"])
@pytest.mark.parametrize("mode", MODES)
def test_coverage_coexists(mode, core, monkeypatch):
    coverage = pytest.importorskip("coverage")
    if core == "sysmon" and sys.version_info < (3, 12):
        pytest.skip("coverage's sys.monitoring core needs 3.12+")
    monkeypatch.setenv("COVERAGE_CORE", core)
    cov = coverage.Coverage(data_file=None, config_file=False)
    cov.start()
    try:
        with tracking.enable(mode=mode, window=4):
            fib(3)
            w = tracking.window()
    finally:
        cov.stop()
    check_window_saw_fib(w)
    measured = cov.get_data().lines(__file__) or []
    assert fib.__code__.co_firstlineno + 1 in measured


@pytest.mark.skipif("monitoring" not in MODES, reason="sys.monitoring needs 3.12+")
class TestToolIds:
    def test_default_ids_taken_names_the_holders(self):
        mon = sys.monitoring
        mon.use_tool_id(4, "alpha-tool")
        mon.use_tool_id(3, "beta-tool")
        try:
            with pytest.raises(RuntimeError) as e:
                tracking.enable(mode="monitoring")
            msg = str(e.value)
            assert "tool id 4 is in use by 'alpha-tool'" in msg
            assert "tool id 3 is in use by 'beta-tool'" in msg and "tool_id=" in msg
            assert not tracking.status()["enabled"]
            with tracking.enable(mode="monitoring", tool_id=5, window=2):
                assert tracking.status()["tool_id"] == 5
                assert mon.get_tool(5) == "callsite.tracking"
                fib(2)
                check_window_saw_fib(tracking.window())
            assert mon.get_tool(5) is None
            assert mon.get_tool(4) == "alpha-tool"  # others' ids untouched
        finally:
            mon.free_tool_id(4)
            mon.free_tool_id(3)

    def test_explicit_id_in_use(self):
        mon = sys.monitoring
        mon.use_tool_id(2, "some-profiler")
        try:
            with pytest.raises(RuntimeError, match="tool id 2 is in use by 'some-profiler'"):
                tracking.enable(mode="monitoring", tool_id=2)
        finally:
            mon.free_tool_id(2)

    def test_fallback_to_second_default(self):
        mon = sys.monitoring
        mon.use_tool_id(4, "alpha-tool")
        try:
            with tracking.enable(mode="monitoring"):
                assert tracking.status()["tool_id"] == 3
        finally:
            mon.free_tool_id(4)

    def test_other_tool_disabling_everything_does_not_affect_us(self):
        mon = sys.monitoring
        calls = []

        def other(code, offset, callable_, arg0):
            calls.append((code, offset))  # DISABLE is per (code, offset): offsets alone repeat
            return mon.DISABLE

        mon.use_tool_id(3, "disabler")
        mon.register_callback(3, mon.events.CALL, other)
        mon.set_events(3, mon.events.CALL)
        try:
            with tracking.enable(mode="monitoring", window=4):
                for _ in range(3):
                    fib(4)
                w = tracking.window()
        finally:
            mon.set_events(3, 0)
            mon.register_callback(3, mon.events.CALL, None)
            mon.free_tool_id(3)
        check_window_saw_fib(w)
        assert len(calls) == len(set(calls))  # its sites stayed off for it, not for us

    def test_switching_modes_releases_the_tool_id(self):
        if "profile" not in MODES:
            pytest.skip("profile mode unavailable")
        with tracking.enable(mode="monitoring"):
            assert sys.monitoring.get_tool(4) == "callsite.tracking"
            with tracking.enable(mode="profile"):
                assert sys.monitoring.get_tool(4) is None
            assert sys.monitoring.get_tool(4) == "callsite.tracking"
        assert sys.monitoring.get_tool(4) is None


@pytest.mark.skipif("monitoring" not in MODES, reason="sys.monitoring mode unavailable")
@pytest.mark.parametrize("how", ["callback", "callback None", "events"])
def test_another_tool_using_our_id_makes_queries_raise_not_go_stale(how):
    """A tool that replaces the CALL callback (or turns the CALL events off) of callsite's own
    tool id stops the window from recording: queries say so instead of answering with the
    calls made before."""
    import callsite
    mon = sys.monitoring
    theirs = []

    def other(code, offset, callable_, arg0):
        theirs.append(code)

    def before():
        pass

    def after():
        pass

    tracking.enable(mode="monitoring", tool_id=4)
    before()
    assert any(e.callee is before.__code__ for e in tracking.window())
    if how == "events":
        mon.set_events(4, 0)
    else:
        mon.register_callback(4, mon.events.CALL, None if how == "callback None" else other)
    after()
    for query in (tracking.window, lambda: tracking.last(None),
                  lambda: callsite.capture(source="window")):
        with pytest.raises(RuntimeError, match=r"tool id 4 (was replaced|were turned off) by "
                                               r"another tool.*enable\(\) again"):
            query()
    # What the message says brings it back.
    tracking.enable(mode="monitoring", tool_id=4)
    after()
    assert any(e.callee is after.__code__ for e in tracking.window())
    tracking.disable()
    assert mon.get_tool(4) is None
    if how == "callback":
        assert theirs  # their callback ran while it was registered


@pytest.mark.skipif("monitoring" not in MODES, reason="sys.monitoring mode unavailable")
def test_enable_again_after_another_tool_freed_our_id():
    """The query's error says to call enable() again: that claims an id anew, even with the
    same settings."""
    mon = sys.monitoring

    def after():
        pass

    tracking.enable(mode="monitoring")
    tool = tracking.status()["tool_id"]
    mon.free_tool_id(tool)
    mon.use_tool_id(tool, "another tool")
    try:
        with pytest.raises(RuntimeError, match=r"lost its sys.monitoring tool id .*enable\(\) again"):
            tracking.last(None)
        mon.free_tool_id(tool)
        tracking.enable(mode="monitoring")
        after()
        assert any(e.callee is after.__code__ for e in tracking.window())
    finally:
        tracking.disable()
        if mon.get_tool(tool) == "another tool":
            mon.free_tool_id(tool)
