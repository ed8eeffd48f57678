"""Native locals under attack: an interrupt raised by a locals reifier, greenlets suspended
inside one, whole-mapping reads of many variables, a thread per request, C++ frames with
their own reifier pushed without the GIL."""
from __future__ import annotations

import gc
import os
import subprocess
import sys
import textwrap
import threading
import traceback
import warnings

import pytest

import callsite
from callsite import native

VISIBLE = sys.version_info[:2] >= (3, 12) and native.visible_frames_available()
needs_visible = pytest.mark.skipif(not VISIBLE, reason="no visible native frames here")

LOCATIONS = [native.Location("prog.dsl", 2 + k, name="kernel") for k in range(4)]

# A greenlet suspended inside a reifier has callsite's instrumented C++ frames on its C stack.
not_under_asan = pytest.mark.skipif(
    bool(os.environ.get("CALLSITE_SANITIZED")),
    reason="greenlet saves a switched-out C stack with memcpy: ASan's interceptor reports the "
           "redzones of the instrumented C++ frames on it")


def shadow_executable(fn, name="kernel"):
    return native.Executable(name, lambda s: LOCATIONS[s % 4], locals=fn)


def kernel_names(exc):
    return [f.f_code.co_name for f, _ in traceback.walk_tb(exc.__traceback__)
            if f.f_code.co_filename == "prog.dsl"]


# --- an interrupt from the reifier as an exception passes a shadow frame ---------------------


@pytest.mark.parametrize("interrupt", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("form", ["with", "decorator"])
def test_interrupt_keeps_the_entry_and_is_delivered(interrupt, form):
    def fn(state):
        raise interrupt("from the reifier")

    exe = shadow_executable(fn)

    def run():
        if form == "with":
            with exe.frame(state=1):
                raise ValueError("passing")
        else:
            exe.frame(state=1)(lambda: (_ for _ in ()).throw(ValueError("passing")))()

    unraisable = []
    old_hook = sys.unraisablehook
    sys.unraisablehook = unraisable.append
    try:
        with pytest.raises(interrupt) as info:
            run()
    finally:
        sys.unraisablehook = old_hook
    assert unraisable == []
    passing = info.value.__context__
    assert isinstance(passing, ValueError)
    assert kernel_names(passing) == ["kernel"]
    entry = [f for f, _ in traceback.walk_tb(passing.__traceback__)
             if f.f_code.co_filename == "prog.dsl"][0]
    assert dict(entry.f_locals) == {}  # the entry stays, without variables


# --- greenlets suspended inside a reifier -----------------------------------------------------


@not_under_asan
def test_greenlet_suspended_in_a_reifier_leaves_the_others_alone():
    greenlet = pytest.importorskip("greenlet")
    main = greenlet.getcurrent()

    def fn(state):
        if greenlet.getcurrent() is not main:
            main.switch("suspended")
        return {"state": state}

    executables = [shadow_executable(fn, name=f"kernel{i}") for i in range(17)]

    def read_in_greenlet(exe, state):
        with exe.frame(state=state):
            return [f.locals for f in callsite.capture() if f.kind == "native"]

    def read_here(exe, state):
        with exe.frame(state=state):
            return [f.locals for f in callsite.capture() if f.kind == "native"]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # one greenlet per executable, each suspended inside its reifier
        greenlets = [greenlet.greenlet(read_in_greenlet) for _ in range(16)]
        for i, g in enumerate(greenlets):
            assert g.switch(executables[i], i) == "suspended"
        # the main greenlet reads the same executables, and a 17th
        for i in (0, 7, 15, 16):
            assert read_here(executables[i], i) == [{"state": i}]
        # resumed out of order: each finishes with its own read
        order = [5, 0, 15, 3, 8, 1, 14, 2, 9, 4, 13, 6, 12, 7, 11, 10]
        results = {i: greenlets[i].switch() for i in order}
        assert results == {i: [{"state": i}] for i in range(16)}
        for i in (0, 10, 16):
            assert read_here(executables[i], i + 1) == [{"state": i + 1}]
    assert [str(w.message) for w in caught if "re-entered" in str(w.message)] == []


@needs_visible
@not_under_asan
def test_greenlets_resumed_out_of_order_read_whole_mappings():
    greenlet = pytest.importorskip("greenlet")
    main = greenlet.getcurrent()
    regs = {"a": 1, "b": 2}

    def fn(state):
        if greenlet.getcurrent() is not main:
            main.switch("suspended")
        return dict(regs, state=state)

    exe = native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn)

    @exe.frame(state=1)
    def body():
        return dict(sys._getframe(1).f_locals)

    greenlets = [greenlet.greenlet(body) for _ in range(4)]
    for g in greenlets:
        assert g.switch() == "suspended"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert [greenlets[i].switch() for i in (2, 0, 3, 1)] == [dict(regs, state=1)] * 4
        assert body() == dict(regs, state=1)
    assert [str(w.message) for w in caught if "re-entered" in str(w.message)] == []


# --- whole reads of a mapping cost one reifier call -------------------------------------------


@needs_visible
@pytest.mark.parametrize("how", ["dict", "unpack", "update", "items"])
def test_a_whole_read_calls_the_reifier_once(how):
    variables = {f"v{i}": i for i in range(10_000)}
    calls = []

    def fn(state):
        calls.append(state)
        return variables

    exe = native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn)

    @exe.frame(state=1)
    def body():
        loc = sys._getframe(1).f_locals
        if how == "dict":
            return dict(loc)
        if how == "unpack":
            return {**loc}
        if how == "update":
            out = {}
            out.update(loc)
            return out
        return dict(loc.items())

    assert body() == variables
    assert calls == [1]


@needs_visible
def test_reads_after_a_whole_read_see_the_variables_now():
    regs = {"x": 1, "y": 2}
    calls = []

    def fn(state):
        calls.append(state)
        return dict(regs)

    exe = native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn)

    @exe.frame(state=0)
    def body():
        loc = sys._getframe(1).f_locals
        first = dict(loc)
        regs["x"] = 10
        second = loc["x"]  # another instruction: a fresh read
        keys = loc.keys()
        regs["y"] = 20
        third = [loc[k] for k in keys]  # item reads after keys(), from other instructions
        return first, second, third

    first, second, third = body()
    assert first == {"x": 1, "y": 2} and second == 10 and third == [10, 20]
    assert len(calls) == 1 + 1 + 1 + 2


# --- a thread per request ---------------------------------------------------------------------


@needs_visible
def test_threads_that_exit_leave_no_frame_locals_behind():
    exe = native.Executable("kernel", locations=LOCATIONS, visible=True,
                            locals=lambda s: {"s": s})

    @exe.frame(state=0)
    def handle():
        return 1

    def request():
        handle()

    def live():
        gc.collect()
        return sum(1 for o in gc.get_objects() if type(o) is native.FrameLocals)

    request()
    before = live()
    for _ in range(250):
        t = threading.Thread(target=request)
        t.start()
        t.join()
    assert live() - before <= 1


# --- C++ frames with their own reifier, pushed without the GIL --------------------------------


def test_cpp_frames_with_locals_pushed_without_the_gil():
    pytest.importorskip("callsite._callsite_testing")
    code = textwrap.dedent("""
        import callsite
        from callsite import _callsite_testing as testing

        def reader():  # this thread's own frame with locals, while the others push theirs
            native = [f for f in callsite.capture() if f.kind == "native"]
            return [(f.name, f.locals) for f in native] == [("main", {"main": 7})]

        print(*testing.frames_with_locals_without_gil(threads=4, pushes=20000, reader=reader))
    """)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["80000", "True"]
