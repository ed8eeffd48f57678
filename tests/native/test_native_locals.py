"""A native frame's variables: Executable(locals=fn) is called only when something reads them.
CPython's own readers are the oracles (frame.f_locals through sys._getframe, inspect,
tracing tools, sys._current_frames, tracebacks, traceback.TracebackException, pdb, pytest -l);
callsite.Frame.locals covers its captures on every version."""
from __future__ import annotations

import gc
import inspect
import os
import subprocess
import sys
import textwrap
import threading
import traceback
import warnings
import weakref

import pytest

import callsite
from callsite import native

VISIBLE = sys.version_info[:2] >= (3, 12) and native.visible_frames_available()
needs_visible = pytest.mark.skipif(not VISIBLE, reason="no visible native frames here")

LOCATIONS = [native.Location("prog.dsl", 2 + k, name="kernel") for k in range(4)]


class Registers:
    """A DSL interpreter's registers, read by the locals reifier."""

    def __init__(self, **values):
        self.values = dict(values)
        self.calls = 0
        self.threads = []

    def __call__(self, state):
        self.calls += 1
        self.threads.append(threading.get_ident())
        return dict(self.values, pc=state)


def visible_executable(regs, name="kernel"):
    return native.Executable(name, locations=LOCATIONS, visible=True, locals=regs)


def kernel_frame(start):
    f = start
    while f is not None and f.f_code.co_name != "kernel":
        f = f.f_back
    assert f is not None, "no kernel frame on the chain"
    return f


# --- live, on the frame's own thread ---------------------------------------------------------


@needs_visible
def test_getframe_f_locals_reads_the_registers_now():
    regs = Registers(x=1)
    exe = visible_executable(regs)
    seen = {}

    @exe.frame(state=2)
    def body():
        f = sys._getframe(1)
        assert f.f_code.co_name == "kernel"
        assert regs.calls == 0  # taking the frame object reads nothing
        seen["first"] = dict(f.f_locals)
        regs.values["x"] = 2
        seen["second"] = f.f_locals["x"]
        seen["has"] = "x" in f.f_locals and "nope" not in f.f_locals
        seen["len"] = len(f.f_locals)

    body()
    assert seen == {"first": {"x": 1, "pc": 2}, "second": 2, "has": True, "len": 2}


@needs_visible
def test_inspect_stack_shows_the_variables():
    regs = Registers(acc=[1, 2])
    exe = visible_executable(regs)
    got = []

    @exe.frame(state=1)
    def body():
        for info in inspect.stack():
            if info.function == "kernel":
                got.append((info.lineno, dict(info.frame.f_locals)))

    body()
    assert got == [(3, {"acc": [1, 2], "pc": 1})]


@needs_visible
def test_settrace_tool_reads_f_back_f_locals():
    regs = Registers(y=7)
    exe = visible_executable(regs)
    seen = []

    def tracer(frame, event, arg):
        if event == "call" and frame.f_code.co_name == "body":
            seen.append(dict(frame.f_back.f_locals))
        return None

    @exe.frame(state=0)
    def body():
        return 1

    old = sys.gettrace()
    sys.settrace(tracer)
    try:
        body()
    finally:
        sys.settrace(old)
    assert seen == [{"y": 7, "pc": 0}]


@needs_visible
def test_monitoring_tool_reads_the_native_caller():
    mon = sys.monitoring
    tool = mon.PROFILER_ID
    regs = Registers(z="q")
    exe = visible_executable(regs)
    seen = []

    @exe.frame(state=3)
    def body():
        return 1

    def on_start(code, offset):
        if code.co_name == "body":
            seen.append(dict(sys._getframe(1).f_back.f_locals))

    mon.use_tool_id(tool, "callsite-test")
    try:
        mon.register_callback(tool, mon.events.PY_START, on_start)
        mon.set_events(tool, mon.events.PY_START)
        body()
    finally:
        mon.set_events(tool, 0)
        mon.register_callback(tool, mon.events.PY_START, None)
        mon.free_tool_id(tool)
    assert {"z": "q", "pc": 3} in seen


@needs_visible
def test_writes_are_refused_clearly():
    exe = visible_executable(Registers(x=1))

    @exe.frame(state=0)
    def body():
        loc = sys._getframe(1).f_locals
        with pytest.raises(TypeError, match="read-only"):
            loc["x"] = 5
        with pytest.raises(TypeError, match="read-only"):
            del loc["x"]
        return dict(loc)

    assert body() == {"x": 1, "pc": 0}


# --- another thread ---------------------------------------------------------------------------


@needs_visible
def test_other_thread_sees_the_values_as_of_its_read():
    regs = Registers(x=1)
    exe = visible_executable(regs)
    inside, done = threading.Event(), threading.Event()
    owner = []

    @exe.frame(state=1)
    def body():
        owner.append(threading.get_ident())
        inside.set()
        done.wait(10)

    t = threading.Thread(target=body)
    t.start()
    assert inside.wait(10)
    try:
        frame = kernel_frame(sys._current_frames()[t.ident])
        first = dict(frame.f_locals)
        regs.values["x"] = 2
        second = frame.f_locals["x"]
        readers = set(regs.threads)
    finally:
        done.set()
        t.join()
    assert first == {"x": 1, "pc": 1} and second == 2
    # fn ran on the reading thread, not the frame's
    assert readers == {threading.get_ident()} != set(owner)
    # the frame object outlived the pop: its variables were read then, on the frame's thread
    assert regs.threads[-1] == owner[0]
    assert frame.f_locals["x"] == 2


@needs_visible
def test_threads_each_see_their_own_frames():
    errors, reads = [], []

    def run(i):
        try:
            regs = Registers(i=i)
            exe = visible_executable(regs, name="kernel")

            @exe.frame(state=i % 4)
            def body():
                for _ in range(50):
                    got = dict(sys._getframe(1).f_locals)
                    reads.append(i)
                    if got != {"i": i, "pc": i % 4}:
                        errors.append((i, got))

            for _ in range(20):
                body()
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append((i, repr(e)))

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(reads) == 4 * 20 * 50


# --- after the frame ended --------------------------------------------------------------------


def raise_through(exe, regs, state=2):
    @exe.frame(state=state)
    def body():
        raise ValueError("boom")

    try:
        body()
    except ValueError as e:
        regs.values["x"] = "changed after"
        return e
    raise AssertionError("no exception")


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_traceback_frame_keeps_the_values_as_the_exception_passed(visible):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    regs = Registers(x="at raise")
    exe = (visible_executable(regs) if visible else
           native.Executable("kernel", lambda s: LOCATIONS[s], locals=regs))
    e = raise_through(exe, regs)
    frames = [f for f, _ in traceback.walk_tb(e.__traceback__) if f.f_code.co_name == "kernel"]
    assert len(frames) == 1
    assert dict(frames[0].f_locals) == {"x": "at raise", "pc": 2}
    calls = regs.calls
    te = traceback.TracebackException.from_exception(e, capture_locals=True)
    kernel = [fs for fs in te.stack if fs.name == "kernel"]
    assert kernel[0].locals == {"x": "'at raise'", "pc": "2"}
    assert regs.calls == calls  # frozen: no further reifier call


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_no_value_outlives_the_traceback(visible):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")

    class Value:
        pass

    value = Value()
    ref = weakref.ref(value)
    regs = Registers(v=value)
    exe = (visible_executable(regs) if visible else
           native.Executable("kernel", lambda s: LOCATIONS[s], locals=regs))
    e = raise_through(exe, regs)
    frames = [f for f, _ in traceback.walk_tb(e.__traceback__) if f.f_code.co_name == "kernel"]
    assert frames[0].f_locals["v"] is value
    del regs.values["v"], value, frames
    assert ref() is not None  # the traceback keeps it
    e.__traceback__ = None
    del e
    gc.collect()
    assert ref() is None


@needs_visible
def test_frame_object_dropped_before_the_pop_reads_nothing():
    regs = Registers(x=1)
    exe = visible_executable(regs)

    @exe.frame(state=0)
    def body():
        sys._getframe(1)  # a frame object, dropped at once

    body()
    assert regs.calls == 0


# --- laziness ---------------------------------------------------------------------------------


def test_nobody_looking_calls_nothing_over_a_million_pushes_and_states():
    regs = Registers(x=1)
    exe = native.Executable("kernel", lambda s: LOCATIONS[s % 4], locals=regs)
    with exe.frame(state=0) as frame:
        for k in range(1_000_000):
            frame.state = k
    if VISIBLE:
        vexe = visible_executable(regs)

        @vexe.frame(state=1)
        def body():
            return None

        for _ in range(1_000_000):
            body()
    else:
        for _ in range(1_000_000):
            with exe.frame(state=1):
                pass
    assert regs.calls == 0


# --- callsite's own captures ------------------------------------------------------------------


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_frame_locals_of_captures(visible):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    regs = Registers(x=3)
    exe = (visible_executable(regs) if visible else
           native.Executable("kernel", lambda s: LOCATIONS[s], locals=regs))

    @exe.frame(state=1)
    def body():
        return callsite.capture()

    tb = body()
    assert regs.calls == 0  # a capture reads no variables
    native_frames = [f for f in tb if f.kind == "native"]
    assert [f.locals for f in native_frames] == [{"x": 3, "pc": 1}]
    assert all(f.locals is None for f in tb if f.kind == "python")
    plain = native.Executable("plain", lambda s: LOCATIONS[s])
    with plain.frame(state=0):
        assert [f.locals for f in callsite.capture() if f.kind == "native"] == [None]


# --- a misbehaving reifier ---------------------------------------------------------------------


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
@pytest.mark.parametrize("fn, why", [
    (lambda s: 1 / 0, "ZeroDivisionError"),
    (lambda s: 42, "not a mapping"),
    (lambda s: [("x", 1)], "not a mapping"),
    (lambda s: {1: "x"}, "int key"),
], ids=["raises", "int", "list", "bad-key"])
def test_failing_reifier_warns_once_and_shows_nothing(visible, fn, why):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    exe = (native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn) if visible
           else native.Executable("kernel", lambda s: LOCATIONS[s], locals=fn))

    @exe.frame(state=0)
    def body():
        return [f.locals for f in callsite.capture() if f.kind == "native"]

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert body() == [{}]
        assert body() == [{}]
    msgs = [str(w.message) for w in caught if issubclass(w.category, native.ReificationWarning)]
    assert len(msgs) == 1 and why in msgs[0] and "locals reifier" in msgs[0]


@needs_visible
def test_reifier_reading_its_own_frame_is_refused_not_recursed():
    def fn(state):
        inner = dict(kernel_frame(sys._getframe()).f_locals)  # re-enters for this frame
        return {"inner": inner, "tb_len": len(callsite.capture())}

    exe = native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn)

    @exe.frame(state=0)
    def body():
        return dict(sys._getframe(1).f_locals)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = body()
    assert got["inner"] == {} and got["tb_len"] > 0
    assert any("re-entered" in str(w.message) for w in caught)


@needs_visible
def test_keyboard_interrupt_from_the_reifier_propagates():
    raised = []

    def fn(state):
        if not raised:
            raised.append(1)
            raise KeyboardInterrupt
        return {"x": 1}

    exe = native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn)

    @exe.frame(state=0)
    def body():
        return sys._getframe(1).f_locals["x"]

    with pytest.raises(KeyboardInterrupt) as info:
        body()
    # the traceback's frame was read again as the exception passed it
    frames = [f for f, _ in traceback.walk_tb(info.value.__traceback__)
              if f.f_code.co_name == "kernel"]
    assert dict(frames[0].f_locals) == {"x": 1}


def test_locals_must_be_callable():
    with pytest.raises(TypeError, match="locals must be callable"):
        native.Executable("k", lambda s: None, locals=3)
    assert native.Executable("k", lambda s: None, locals=None).locals is None


# --- greenlets --------------------------------------------------------------------------------


@needs_visible
def test_greenlet_switch_inside_a_frame():
    greenlet = pytest.importorskip("greenlet")
    regs = Registers(g=1)
    exe = visible_executable(regs)

    @exe.frame(state=2)
    def body():
        main.switch("parked")
        return dict(sys._getframe(1).f_locals)

    main = greenlet.getcurrent()
    g = greenlet.greenlet(body)
    assert g.switch() == "parked"
    parked = dict(kernel_frame(g.gr_frame).f_locals)
    regs.values["g"] = 2
    assert g.switch() == {"g": 2, "pc": 2}
    assert parked == {"g": 1, "pc": 2}


# --- pdb and pytest, driven in a subprocess ---------------------------------------------------

SCRIPT = textwrap.dedent("""
    import pdb, sys
    from callsite import native
    regs = {"counter": 41, "name": "dsl"}
    exe = native.Executable("kernel", locations=[native.Location("prog.dsl", 2, name="kernel")],
                            visible=%(visible)s, locals=lambda s: dict(regs))
    @exe.frame(state=0)
    def body():
        %(body)s
    %(main)s
""")


def run_python(code, stdin=""):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], input=stdin, capture_output=True,
                          text=True, env=env, timeout=120)


@needs_visible
def test_pdb_live_from_a_python_callback():
    code = SCRIPT % {"visible": True, "body": "pdb.set_trace(); return 1",
                     "main": "body()"}
    out = run_python(code, "up\np counter + 1\npp locals()\ncontinue\n").stdout
    assert "kernel()" in out
    assert "42" in out
    assert "'counter': 41" in out and "'name': 'dsl'" in out


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_pdb_post_mortem(visible):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    code = SCRIPT % {
        "visible": visible, "body": "raise ValueError('x')",
        "main": "try:\n    body()\nexcept ValueError as e:\n    regs['counter'] = 0\n"
                "    pdb.post_mortem(e.__traceback__)"}
    out = run_python(code, "up\np counter\np name\nquit\n").stdout
    assert "kernel()" in out
    assert "41" in out and "'dsl'" in out


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_pytest_l_shows_the_dsl_variables(visible, tmp_path):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    test = tmp_path / "test_dsl.py"
    test.write_text(textwrap.dedent(f"""
        from callsite import native
        exe = native.Executable("kernel", locations=[native.Location("prog.dsl", 2, name="kernel")],
                                visible={visible}, locals=lambda s: {{"dsl_register": 12345}})
        @exe.frame(state=0)
        def body():
            assert False
        def test_it():
            body()
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-m", "pytest", "-l", "-p", "no:cacheprovider",
                          str(test)], capture_output=True, text=True, env=env, cwd=tmp_path,
                         timeout=120).stdout
    assert "dsl_register = 12345" in out


# --- the calc interpreter's registers -----------------------------------------------------------

@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_calc_interpreter_shows_its_environment(visible):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    from callsite._calc import Program
    from callsite._cli.demo_native import PROGRAM

    seen = []

    def scale(a):
        seen.append([f.locals for f in callsite.capture() if f.kind == "native"])
        if visible:
            seen.append(dict(sys._getframe(1).f_locals))
        return a

    def check(total):
        raise ValueError(total)

    program = Program(PROGRAM, "locals_test.calc", {"scale": scale, "check": check},
                      visible=visible)
    with pytest.raises(ValueError) as info:
        program.call("total", 2)
    assert seen[0] == [{"w": 1.0, "h": 2.0, "a": 2.0}, {"n": 2.0, "sum": 0.0, "i": 1.0}]
    if visible:
        assert seen[1] == {"w": 1.0, "h": 2.0, "a": 2.0}
    entries = [(f.f_code.co_name, dict(f.f_locals))
               for f, _ in traceback.walk_tb(info.value.__traceback__)
               if f.f_code.co_filename == "locals_test.calc"]
    assert entries == [("total", {"n": 2.0, "sum": 8.0, "i": 3.0})]


def test_demo_ends_with_a_post_mortem_printing_a_dsl_variable():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-m", "callsite", "demo", "native"],
                         capture_output=True, text=True, env=env, timeout=120).stdout
    tail = out[out.index("pdb.post_mortem()"):]
    assert "total()" in tail and "(Pdb) 40.0" in tail  # `p sum` in the calc frame


@needs_visible
def test_locals_and_eval_called_directly_inside_see_the_variables():
    exe = visible_executable(Registers(x=5))
    assert dict(exe.frame(state=0)(locals)()) == {"x": 5, "pc": 0}
    assert exe.frame(state=1)(eval)("x + pc") == 6
    plain = native.Executable("kernel", locations=LOCATIONS, visible=True)
    assert plain.frame(state=0)(locals)() == {}


@pytest.mark.parametrize("visible", [True, False], ids=["visible", "shadow"])
def test_reifier_pushing_frames_of_its_own_executable(visible):
    if visible and not VISIBLE:
        pytest.skip("no visible native frames here")
    depth = []

    def fn(state):
        if not depth:  # one level: the nested frame's own reads
            depth.append(1)
            try:
                inner()
            finally:
                depth.pop()
        return {"state": state, "stack": len(native.stack())}

    exe = (native.Executable("kernel", locations=LOCATIONS, visible=True, locals=fn) if visible
           else native.Executable("kernel", lambda s: LOCATIONS[s], locals=fn))

    @exe.frame(state=3)
    def inner():
        return [f.locals for f in callsite.capture() if f.kind == "native"]

    @exe.frame(state=1)
    def body():
        raise ValueError("x")

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError) as info:
            body()
    kernel = [f for f, _ in traceback.walk_tb(info.value.__traceback__)
              if f.f_code.co_name == "kernel"]
    assert dict(kernel[0].f_locals) == {"state": 1, "stack": 1}
    assert native.stack() == []
    # the nested frame's capture read the outer frame of the same executable: refused once
    assert [str(w.message) for w in caught if "re-entered" in str(w.message)]
