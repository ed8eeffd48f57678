"""callsite.tracking windows vs CPython's own event stream, per mode: contents, lifetimes, hooks."""
import dis
import gc
import sys
import threading
import types
import weakref

import pytest

import callsite
import callsite.tracking as tracking

MODES = [m for m, why in tracking.available_modes().items() if m != "auto" and why is None]
REF_TOOL = 3  # the reference tracker's sys.monitoring id (callsite takes 4 by default)
# Profile mode also sees generators and coroutines resumed (by FOR_ITER, SEND, ...).
RESUMABLE = 0x20 | 0x80 | 0x100 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ITERABLE_COROUTINE, ...
CALL_OPS = {"CALL", "CALL_KW", "CALL_FUNCTION", "CALL_METHOD", "CALL_FUNCTION_KW",
            "CALL_FUNCTION_EX"}


def callee_code(callable_):
    """The code object callsite reports as callee for a sys.monitoring CALL (Python callables)."""
    if isinstance(callable_, types.FunctionType):
        return callable_.__code__
    if isinstance(callable_, types.MethodType) and isinstance(callable_.__func__,
                                                               types.FunctionType):
        return callable_.__func__.__code__
    return None


class Reference:
    """The same window, kept by a pure-Python hook on the same event stream (the oracle).

    Monitoring: a second sys.monitoring tool receives the very CALL events callsite receives.
    Profile: a sys.setprofile function installed first, which callsite chains, receives the very
    events callsite's profile function receives (f_back / f_lasti read by CPython's frame objects).
    Per thread: each thread's entries go to its own list.
    """

    def __init__(self, mode):
        self.mode = mode
        self.local = threading.local()
        self.all = []

    def events(self):
        ev = getattr(self.local, "ev", None)
        if ev is None:
            ev = self.local.ev = []
            self.all.append(ev)
        return ev

    def on_call(self, code, offset, callable_, arg0):
        self.events().append((code, offset, callee_code(callable_)))

    def on_profile(self, frame, event, arg):
        if event == "call":
            back = frame.f_back
            if back is not None:
                self.events().append((back.f_code, back.f_lasti, frame.f_code))
        elif event == "c_call":
            self.events().append((frame.f_code, frame.f_lasti, None))

    def __enter__(self):
        if self.mode == "monitoring":
            mon = sys.monitoring
            mon.use_tool_id(REF_TOOL, "callsite-test-reference")
            mon.register_callback(REF_TOOL, mon.events.CALL, self.on_call)
            mon.set_events(REF_TOOL, mon.events.CALL)
        else:
            threading.setprofile(self.on_profile)
            sys.setprofile(self.on_profile)
        return self

    def __exit__(self, *exc):
        if self.mode == "monitoring":
            mon = sys.monitoring
            mon.set_events(REF_TOOL, 0)
            mon.register_callback(REF_TOOL, mon.events.CALL, None)
            mon.free_tool_id(REF_TOOL)
        else:
            sys.setprofile(None)
            threading.setprofile(None)


@pytest.fixture(autouse=True)
def tracking_off():
    """Every test starts and ends with tracking off and no profiler."""
    tracking.disable()
    assert sys.getprofile() is None
    yield
    tracking.disable()
    sys.setprofile(None)
    threading.setprofile(None)


def entries(window):
    return [(e.code, e.offset, e.callee) for e in window]


# --- a scripted call sequence -----------------------------------------------------------------

def leaf0():
    return 0


def leaf1(x=1):
    return x


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return leaf1(self.v)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def gen():
    leaf0()
    yield 1
    leaf1()
    yield 2


async def coro():
    leaf0()
    await Awaitable()
    leaf1(5)
    return 3


class Awaitable:
    def __await__(self):
        leaf0()
        yield "suspended"


def raiser(depth):
    leaf0()
    if depth == 0:
        raise ValueError("unwind")
    return raiser(depth - 1)


def script():
    leaf0()
    leaf1(x=2)
    len([1, 2])
    Box(3).get()
    fib(7)
    for _ in gen():
        leaf0()
    g = gen()
    next(g)
    next(g)
    c = coro()
    c.send(None)
    try:
        c.send(None)
    except StopIteration:
        pass
    try:
        raiser(3)
    except ValueError:
        leaf1(7)
    sorted([3, 1, 2], key=leaf1)
    f = lambda: leaf0()  # noqa: E731
    f()
    leaf1(*[4])


@pytest.mark.parametrize("size", [1, 3, 8, 64])
@pytest.mark.parametrize("mode", MODES)
def test_window_equals_last_calls_of_the_event_stream(mode, size):
    with Reference(mode) as ref:
        stream = ref.events()
        with tracking.enable(mode=mode, window=size):
            script()
            w = tracking.window()
            expected = stream[:]  # slicing makes no call: nothing recorded after window()
    want = expected[::-1][:size]
    assert len(want) == size  # the script makes far more calls than the largest window
    assert entries(w) == want
    # Entry 0 is the call of window() itself, made from this function.
    assert w[0].code is test_window_equals_last_calls_of_the_event_stream.__code__
    assert w[0].callee is None


@pytest.mark.parametrize("mode", MODES)
def test_phases_generators_coroutines_exceptions(mode):
    """Window after each phase (resumed generators/coroutines, unwinding) vs the reference."""
    phases = [
        lambda: [leaf0() for _ in gen()],
        lambda: next(gen()),
        lambda: coro().send(None),
        lambda: pytest.raises(ValueError, raiser, 4),
        lambda: sorted([2, 1], key=leaf1),
        lambda: fib(6),
    ]
    with Reference(mode) as ref:
        stream = ref.events()
        with tracking.enable(mode=mode, window=16):
            results = []
            for phase in phases:
                phase()
                w = tracking.window()
                snap = stream[:]
                results.append((entries(w), snap[::-1][:16]))
    for got, want in results:
        assert got == want[: len(got)]
    assert len(results[-1][0]) == 16


@pytest.mark.parametrize("mode", MODES)
def test_offsets_are_call_instructions_and_sites_their_lines(mode):
    """Independent of the reference: each entry's offset lies in a CALL instruction of its code
    (monitoring: exactly at it), and the site's line is that instruction's line."""
    with tracking.enable(mode=mode, window=64):
        script()
        w = tracking.window()
    assert len(w) == 64
    for e in w:
        instrs = list(dis.get_instructions(e.code))
        ends = {a.offset: b.offset for a, b in zip(instrs, instrs[1:])}
        calls = [i for i in instrs if i.opname in CALL_OPS]
        if mode == "monitoring":
            hit = [i for i in calls if i.offset == e.offset]
        else:  # f_lasti may point into the CALL's inline cache (3.11+)
            resumed = e.callee is not None and e.callee.co_flags & RESUMABLE
            hit = [i for i in (instrs if resumed else calls)
                   if i.offset <= e.offset < ends.get(i.offset, 1 << 30)]
        assert hit, (e.code, e.offset, [i.offset for i in calls])
        line = hit[0].positions.lineno if sys.version_info >= (3, 11) else None
        if line is None:
            line = next(ln for start, end, ln in e.code.co_lines() if start <= e.offset < end)
        assert e.site.lineno == line
        assert e.site.filename == e.code.co_filename
        assert e.site.qualname == getattr(e.code, "co_qualname", e.code.co_name)


@pytest.mark.parametrize("mode", MODES)
def test_window_as_traceback_through_capture(mode):
    with tracking.enable(mode=mode, window=8):
        fib(5)
        leaf0()
        tb = callsite.capture(source="window")
        w = tracking.window()
    assert isinstance(tb, callsite.Traceback)
    # Both queries saw the same calls; window() has one more (itself) at its head.
    assert len(tb) == 8 and tb.raw()[:7] == [(e.code, e.offset) for e in w[1:]]
    assert tb.raw()[0][0] is test_window_as_traceback_through_capture.__code__
    assert tb[0].lineno == w[0].site.lineno - 1
    assert tb[1].lineno == tb[0].lineno - 1  # leaf0() on the line above


@pytest.mark.parametrize("mode", MODES)
def test_skip_and_limit(mode):
    with tracking.enable(mode=mode, window=8):
        fib(4)
        full = tracking.window()
        fib(4)
        part = tracking.window(2, 3)
        fib(4)
        tb = callsite.capture(2, 3, source="window")
    assert entries(part) == entries(full)[2:5]
    assert [(c, o) for c, o in tb.raw()] == [(e.code, e.offset) for e in full[2:5]]
    assert (tracking.window.__module__, tracking.window.__name__) == ("callsite._callsite.tracking", "window")


def test_disabled_window_raises_clearly():
    with pytest.raises(RuntimeError, match="tracking.*off.*enable"):
        callsite.capture(source="window")
    with pytest.raises(RuntimeError, match="enable"):
        tracking.window()


def test_bad_arguments():
    with pytest.raises(ValueError, match="mode must be"):
        tracking.enable(mode="fast")
    with pytest.raises(ValueError, match="window"):
        tracking.enable(window=0)
    with pytest.raises(TypeError, match="window must be an int"):
        tracking.enable(window="8")
    with pytest.raises(TypeError, match="window must be an int"):
        tracking.enable(window=True)
    with pytest.raises(ValueError, match="tool_id"):
        tracking.enable(mode="monitoring" if "monitoring" in MODES else "profile", tool_id=9)
    if "profile" in MODES:
        with pytest.raises(ValueError, match="tool_id applies to mode='monitoring' only"):
            tracking.enable(mode="profile", tool_id=3)
    assert not tracking.status()["enabled"]
    with tracking.enable(window=2):
        with pytest.raises(TypeError, match="skip must be an int"):
            tracking.window("1")
        with pytest.raises(TypeError, match="unexpected keyword"):
            tracking.window(depth=1)


def test_auto_mode_and_availability():
    modes = tracking.available_modes()
    assert modes["profile"] is None
    if sys.version_info >= (3, 12):
        assert modes["monitoring"] is None and modes["auto"] == "monitoring"
    else:
        assert "3.12" in modes["monitoring"] and modes["auto"] == "profile"
        with pytest.raises(RuntimeError, match="needs Python 3.12"):
            tracking.enable(mode="monitoring")
    with tracking.enable():
        assert tracking.status()["mode"] == modes["auto"]


@pytest.mark.parametrize("mode", MODES)
def test_disable_removes_every_hook(mode):
    tracking.enable(mode=mode)
    fib(7)
    st = tracking.status()
    assert st["enabled"] and st["callbacks"] > 0 and st["this_thread"]
    tracking.disable()
    before = tracking.status()["callbacks"]
    fib(10)
    len([])
    assert tracking.status()["callbacks"] == before  # no callback ran
    assert sys.getprofile() is None
    assert threading.getprofile() is None
    if sys.version_info >= (3, 12):
        assert all(sys.monitoring.get_tool(i) is None for i in range(6))
    st = tracking.status()
    assert not st["enabled"] and st["threads"] == 0 and st["tool_id"] is None


def test_enable_nesting_and_reconfiguration():
    other = [m for m in MODES if m != MODES[0]]
    with tracking.enable(mode=MODES[0], window=4) as outer:
        assert "restores off" in repr(outer)
        with tracking.enable(mode=MODES[0], window=2):
            assert tracking.status()["window"] == 2
            fib(3)
            assert len(tracking.window()) == 2
        st = tracking.status()
        assert st["enabled"] and st["mode"] == MODES[0] and st["window"] == 4
        fib(3)
        assert len(tracking.window()) == 4  # the window grew back (older entries were dropped)
        if other:
            with tracking.enable(mode=other[0], window=3):
                assert tracking.status()["mode"] == other[0]
                fib(3)
                assert len(tracking.window()) == 3
            assert tracking.status()["mode"] == MODES[0]
            fib(3)
            assert len(tracking.window()) == 4
    assert not tracking.status()["enabled"]


def test_mode_switch_on_a_thread_without_a_state_dict():
    """A thread whose state has no dict yet: profile rings dying there must not make the
    monitoring mode think the thread is being torn down."""
    if len(MODES) < 2:
        pytest.skip("needs both modes")
    import _thread
    done = _thread.allocate_lock()
    done.acquire()
    out = {}

    def body():  # a bare _thread thread: no threading bookkeeping, no thread-state dict
        try:
            for mode in ("profile", "monitoring", "profile", "monitoring"):
                tracking.enable(mode=mode, window=3)
                fib(3)
                leaf0()
                w = tracking.window()
                out.setdefault(mode, []).append(entries(w))
                tracking.disable()
        except BaseException as e:
            out["error"] = e
        done.release()

    _thread.start_new_thread(body, ())
    done.acquire()
    assert "error" not in out, out.get("error")
    for mode in ("profile", "monitoring"):
        for w in out[mode]:
            assert len(w) == 3 and w[1][2] is leaf0.__code__, mode


@pytest.mark.parametrize("mode", MODES)
def test_resize_keeps_most_recent(mode):
    with tracking.enable(mode=mode, window=16):
        fib(6)
        w = tracking.window()
        callsite._callsite.tracking.enable(mode, 5, None, None)  # one call, recorded before it runs
        w = (w, tracking.window())
        w16, w5 = entries(w[0]), entries(w[1])
    # [window(), enable() (a builtin: a CALL event, and a c_call in profile mode), then the
    # most recent entries of the 16-entry window]
    assert len(w16) == 16 and len(w5) == 5
    start = w5.index(w16[0])
    assert start == 2
    assert w5[start:] == w16[: 5 - start]


# --- lifetimes: the window owns its code objects ---------------------------------------------

def fresh_function(tag):
    """Functions whose code objects nobody else references (no cycle through globals either,
    so they die the moment their last reference goes): `caller()` calls `leaf()` twice."""
    ns = {}
    exec(compile(f"def leaf():\n    return {tag!r}\n"
                 f"def caller(leaf=leaf):\n    leaf()\n    leaf()\n", f"<fresh-{tag}>", "exec"),
         ns)
    caller, leaf = ns["caller"], ns["leaf"]
    ns.clear()
    return caller, leaf


def collect_until_dead(ref):
    for _ in range(5):
        gc.collect()
        if ref() is None:
            return True
    return False


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("how", ["clear", "disable", "overwrite"])
def test_window_keeps_then_releases_code(mode, how):
    tracking.enable(mode=mode, window=64)
    caller, leaf = fresh_function(f"{mode}-{how}")
    caller()
    w = tracking.window()
    assert w[1].code is caller.__code__ and w[1].callee is leaf.__code__
    refs = [weakref.ref(caller.__code__), weakref.ref(leaf.__code__)]
    del caller, leaf, w
    assert not collect_until_dead(refs[0]) and refs[1]() is not None  # the window holds both
    if how == "clear":
        tracking.clear()
        assert tracking.status()["enabled"]
    elif how == "disable":
        tracking.disable()
    else:
        for _ in range(70):
            leaf0()
    assert collect_until_dead(refs[0]) and collect_until_dead(refs[1])


@pytest.mark.parametrize("mode", MODES)
def test_refcounts_balance(mode):
    code = fib.__code__
    before = sys.getrefcount(code)
    with tracking.enable(mode=mode, window=32):
        fib(12)
        assert sys.getrefcount(code) > before  # entries hold references
        tracking.enable(mode=mode, window=3)  # resize drops some
        fib(12)
    assert sys.getrefcount(code) == before


@pytest.mark.parametrize("mode", MODES)
def test_releasing_code_that_runs_code_is_safe(mode):
    """Dropping a window entry may free a code object whose weakref callback makes calls."""
    fired = []
    with tracking.enable(mode=mode, window=2):
        for i in range(20):
            caller, _ = fresh_function(f"cb-{i}")
            keep = weakref.ref(caller.__code__, lambda r: fired.append(fib(3)))
            caller()
            del caller, _
            leaf0(), leaf0(), leaf0()  # overwrites: frees the code, whose callback calls fib
            del keep
        w = tracking.window()
    assert len(w) == 2 and len(fired) == 20


# --- threads ---------------------------------------------------------------------------------

def run_in_thread(target):
    out = {}

    def body():
        try:
            out["value"] = target()
        except BaseException as e:  # re-raised in the main thread
            out["error"] = e

    t = threading.Thread(target=body)
    t.start()
    t.join()
    if "error" in out:
        raise out["error"]
    return out["value"]


@pytest.mark.parametrize("mode", MODES)
def test_windows_are_per_thread(mode):
    barrier = threading.Barrier(3)
    results = {}

    def worker(name, fn):
        stream = ref.events()
        barrier.wait()
        for _ in range(50):
            fn()
        w = tracking.window()
        snap = stream[:]
        results[name] = (entries(w), snap[::-1][:6])

    with Reference(mode) as ref:
        with tracking.enable(mode=mode, window=6):
            ts = [threading.Thread(target=worker, args=("fib", lambda: fib(4))),
                  threading.Thread(target=worker, args=("box", lambda: Box(1).get()))]
            for t in ts:
                t.start()
            barrier.wait()
            leaf0()
            mine = entries(tracking.window())
            for t in ts:
                t.join()
    assert mine[1][0] is test_windows_are_per_thread.__code__ and mine[1][2] is leaf0.__code__
    for name, (got, want) in results.items():
        assert got == want, name
    fib_codes = {e[0] for e in results["fib"][0][1:]}
    box_codes = {e[0] for e in results["box"][0][1:]}
    assert fib.__code__ in fib_codes and Box.get.__code__ not in fib_codes
    assert Box.get.__code__ in box_codes and fib.__code__ not in box_codes


@pytest.mark.parametrize("mode", MODES)
def test_thread_existing_before_enable_is_covered(mode):
    go, done = threading.Event(), threading.Event()
    out = {}

    def body():
        go.wait()
        fib(3)
        leaf0()
        out["w"] = entries(tracking.window())
        done.set()

    t = threading.Thread(target=body)
    t.start()
    with tracking.enable(mode=mode, window=3):
        go.set()
        done.wait()
        t.join()
    assert out["w"][1][0] is body.__code__ and out["w"][1][2] is leaf0.__code__
    assert out["w"][2][0] is fib.__code__


@pytest.mark.parametrize("mode", MODES)
def test_thread_end_releases_its_window(mode):
    with tracking.enable(mode=mode, window=4):
        threads_before = tracking.status()["threads"]

        def body():
            caller, leaf = fresh_function(f"thread-{mode}")
            caller()
            assert tracking.window()[1].code is caller.__code__
            return weakref.ref(caller.__code__), weakref.ref(leaf.__code__)

        refs = run_in_thread(body)
        # The thread state owned the window; PyThreadState_Clear released it as the thread ended.
        assert collect_until_dead(refs[0]) and collect_until_dead(refs[1])
        assert tracking.status()["threads"] == threads_before


def test_threads_started_later_in_profile_mode_chain_threading_hook():
    if "profile" not in MODES:
        pytest.skip("profile mode unavailable")
    seen = []

    def user_hook(frame, event, arg):
        if event == "call":
            seen.append(frame.f_code)

    threading.setprofile(user_hook)
    with tracking.enable(mode="profile", window=4):
        w = run_in_thread(lambda: (fib(3), entries(tracking.window()))[1])
    assert threading.getprofile() is user_hook  # restored
    threading.setprofile(None)
    assert fib.__code__ in seen  # the user's hook still ran on the new thread
    assert any(e[2] is fib.__code__ for e in w)


# --- stress: switching while other threads call -------------------------------------------------

def test_toggling_modes_while_threads_run():
    """enable/disable/switch modes and window sizes while two threads keep calling: nothing
    crashes, every window read is well formed, and everything is released at the end."""
    stop = threading.Event()
    errors = []

    def worker():
        while not stop.is_set():
            fib(6)
            try:
                w = tracking.window()
                assert all(isinstance(e.code, types.CodeType) for e in w)
            except RuntimeError:
                pass  # tracking off, or this thread not covered right now
            except BaseException as e:  # noqa: BLE001 - reported below
                errors.append(e)

    code = fib.__code__
    base = sys.getrefcount(code)
    ts = [threading.Thread(target=worker) for _ in range(2)]
    for t in ts:
        t.start()
    try:
        for i in range(60):
            mode = MODES[i % len(MODES)]
            tracking.enable(mode=mode, window=1 + i % 9)
            fib(5)
            if i % 3 == 0:
                tracking.disable()
    finally:
        stop.set()
        for t in ts:
            t.join()
        tracking.disable()
    assert not errors, errors[0]
    del ts
    gc.collect()
    assert sys.getrefcount(code) == base
    assert tracking.status()["threads"] == 0
