"""callsite.tracking with Filters: recording filters (DISABLE, rule changes) and filtered queries."""
import importlib.util
import inspect

import pytest

import callsite
import callsite.tracking as tracking

MODES = [m for m, why in tracking.available_modes().items() if m != "auto" and why is None]

LIB = """\
def leaf():
    return callsite.capture(source="window", filter=FILTER, limit=1)

def inner(n):
    return [helper() for _ in range(n)]

def helper():
    return len([1])

def build(n=5):
    inner(n)
    inner(n)
    return leaf()

def walk():
    inner(2)
    return FILTER.first_user_frame()

def last():
    inner(2)
    return callsite.tracking.last(FILTER)
"""


def load(path, name, source, **env):
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    module.__dict__.update(env)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def tracking_off():
    tracking.disable()
    yield
    tracking.disable()


@pytest.fixture
def lib(tmp_path):
    f = callsite.Filter(exclude=[r"/trk_lib/"])
    d = tmp_path / "trk_lib"
    d.mkdir()
    module = load(d / "dsl.py", "trk_lib_dsl", LIB, callsite=callsite, FILTER=f)
    return module, f


def user_calls(module):
    module.build()  # one user call site into the library
    return tracking.window()


@pytest.mark.parametrize("mode", MODES)
def test_recording_filter_keeps_only_kept_call_sites(mode, lib):
    module, f = lib
    with tracking.enable(mode=mode, window=4, filter=f):
        for _ in range(3):
            w = user_calls(module)
        assert tracking.status()["filter"] is f
    assert all(f.keeps(e.code) for e in w)
    # The library made ~30 calls per build(); none displaced the user's sites.
    assert w[0].code is user_calls.__code__ and w[0].callee is None  # window()
    assert w[1].code is user_calls.__code__ and w[1].callee is module.build.__code__
    assert tracking.status()["filter"] is None


@pytest.mark.skipif("monitoring" not in MODES, reason="sys.monitoring needs 3.12+")
def test_monitoring_disables_excluded_sites_and_rule_changes_restart(lib):
    module, f = lib
    with tracking.enable(mode="monitoring", window=8, filter=f):
        user_calls(module)
        st = tracking.status()
        assert st["disabled_sites"] > 0
        before = st["callbacks"]
        for _ in range(20):
            module.build()
        after = tracking.status()["callbacks"]
        # Excluded sites were switched off: only the user's own call sites still call back.
        assert after - before <= 2 * 20 + 2
        # A rule change re-enables the switched-off sites (restart_events) on the next event.
        assert f.remove(r"/trk_lib/")
        module.build()
        w = tracking.window()
        assert any(e.code is module.inner.__code__ for e in w)
        assert tracking.status()["disabled_sites"] == 0
        f.add_exclude(r"/trk_lib/")
        module.build()
        module.build()
        assert not any(e.code.co_filename == module.__file__ for e in tracking.window())


@pytest.mark.skipif("monitoring" not in MODES, reason="sys.monitoring needs 3.12+")
def test_reenable_without_filter_sees_previously_disabled_sites(lib):
    module, f = lib
    with tracking.enable(mode="monitoring", window=8, filter=f):
        user_calls(module)
    assert tracking.status()["disabled_sites"] > 0
    with tracking.enable(mode="monitoring", window=64):
        module.build()
        w = tracking.window()
    assert any(e.code is module.inner.__code__ for e in w)


@pytest.mark.parametrize("mode", MODES)
def test_filtered_query_matches_first_user_frame_of_the_walk(mode, lib):
    module, f = lib
    with tracking.enable(mode=mode, window=64):  # no recording filter: filter at query time
        tb = module.build()  # its leaf() captures the window through the filter, limit=1
        frame = module.walk()  # its first_user_frame() walks the stack through the filter
    me = test_filtered_query_matches_first_user_frame_of_the_walk.__code__
    assert len(tb) == 1 and tb[0].code is me and frame.code is me
    assert tb[0].lineno == frame.lineno - 1
    lines, start = inspect.getsourcelines(me)
    if tb[0].colno is not None:  # 3.11+: column ranges
        assert lines[tb[0].lineno - start][tb[0].colno:tb[0].end_colno] == "module.build()"
        assert lines[frame.lineno - start][frame.colno:frame.end_colno] == "module.walk()"
    else:
        assert "module.build()" in lines[tb[0].lineno - start]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("recording", [False, True])
def test_last_is_the_most_recent_kept_call_site(mode, recording, lib):
    module, f = lib
    with tracking.enable(mode=mode, window=64, filter=f if recording else None):
        frame = module.last()  # the user's call site of last(), seen from inside the library
        here = tracking.last()  # unfiltered: the call of last() itself, on this line
        tb = module.build()
    me = test_last_is_the_most_recent_kept_call_site.__code__
    assert isinstance(frame, callsite.Frame) and frame.code is me
    assert here.code is me and here.lineno == frame.lineno + 1
    assert tb[0].lineno == frame.lineno + 2
    with pytest.raises(TypeError):
        with tracking.enable(mode=mode):
            tracking.last(f, f)
    with pytest.raises(RuntimeError, match="enable"):
        tracking.last()


@pytest.mark.parametrize("mode", MODES)
def test_window_filter_argument_and_limit(mode, lib):
    module, f = lib
    with tracking.enable(mode=mode, window=64):
        module.build()
        kept = tracking.window(filter=f)
        one = tracking.window(filter=f, limit=1)
        f.limit = 2
        two = tracking.window(filter=f)
        f.limit = 10
    assert kept and all(f.keeps(e.code) for e in kept)
    assert len(one) == 1 and len(two) == 2


def test_bad_filter():
    with pytest.raises(TypeError):
        tracking.enable(filter="not a filter")
    assert not tracking.status()["enabled"]
    with tracking.enable(window=4):
        with pytest.raises(TypeError):
            tracking.window(filter=3)
        with pytest.raises(TypeError):
            callsite.capture(source="window", filter=3)
