"""Visible native frames: frames pushed around a nested call from C (the @native.frame
decorator's wrapper, C++ NativeFrame) that are real interpreter frames. CPython's own readers
(sys._getframe, traceback, inspect, faulthandler, warnings, sys._current_frames) are the
oracles; the DSL source file below gives them source lines to show."""
from __future__ import annotations

import builtins
import faulthandler
import gc
import inspect
import linecache
import os
import random
import subprocess
import sys
import textwrap
import threading
import traceback
import warnings

import pytest

import callsite
from callsite import native
from callsite._calc import Program as CalcProgram
import py_spy_support as py_spy
from py_spy_support import wait_for

SUPPORTED = sys.version_info[:2] in ((3, 12), (3, 13), (3, 14), (3, 15)) and \
    native.visible_frames_available()
pytestmark = pytest.mark.skipif(not SUPPORTED, reason="no visible-frame implementation here")

DSL_SOURCE = """\
# prog.dsl
kernel k(x):
  load x
  call host(x)
  store y
  call other(y)
  return y
"""


@pytest.fixture(scope="module")
def dsl_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("dsl") / "prog.dsl"
    path.write_text(DSL_SOURCE)
    return str(path)


@pytest.fixture(scope="module")
def exe(dsl_file):
    """States 0..3 at lines 3..6 of prog.dsl; state 1 with columns."""
    return native.Executable(
        "kernel", kind="dsl", visible=True,
        locations=[native.Location(dsl_file, 3),
                   native.Location(dsl_file, 4, colno=2, end_colno=14),
                   native.Location(dsl_file, 5),
                   native.Location(dsl_file, 6, colno=2, end_colno=15)])


def framed(exe, fn, state=1):
    return native.frame(exe, state)(fn)


def test_getframe_chain_lines_and_positions(exe, dsl_file):
    def callback():
        return sys._getframe(1)

    def caller():
        return framed(exe, callback)(), sys._getframe()

    f, caller_frame = caller()
    assert f.f_code.co_name == "kernel"
    assert f.f_code.co_filename == dsl_file
    assert f.f_lineno == 4
    assert list(f.f_code.co_positions())[f.f_lasti // 2] == (4, 4, 2, 14)
    assert f.f_back is caller_frame
    assert f.f_globals["__name__"] == f.f_globals["__file__"] == dsl_file  # the guest's own


def test_set_state_moves_the_line(exe):
    seen = []

    def callback():
        frame = native.current()
        for state in (0, 2, 3, 99):
            frame.state = state
            seen.append(sys._getframe(1).f_lineno)

    framed(exe, callback)()
    assert seen == [3, 5, 6, None]  # 99: the "no location" slot


def test_traceback_text_has_the_dsl_line(exe, dsl_file):
    def callback():
        raise ValueError("boom")

    def caller():
        framed(exe, callback)()

    with pytest.raises(ValueError) as info:
        caller()
    text = "".join(traceback.format_exception(info.value))
    lines = text.splitlines()
    at = [i for i, line in enumerate(lines) if dsl_file in line]
    assert len(at) == 1, text  # one entry: the real frame, no synthetic duplicate
    assert lines[at[0]] == f'  File "{dsl_file}", line 4, in kernel'
    assert lines[at[0] + 1].strip() == "call host(x)"
    names = [fs.name for fs in traceback.extract_tb(info.value.__traceback__)]
    assert names[-3:] == ["caller", "kernel", "callback"]


def test_exception_traceback_entry_is_the_frame(exe):
    def callback():
        native.current().state = 2
        raise KeyError("x")

    with pytest.raises(KeyError) as info:
        framed(exe, callback)()
    tb = info.value.__traceback__
    entries = []
    while tb:
        entries.append(tb)
        tb = tb.tb_next
    kernel = [t for t in entries if t.tb_frame.f_code.co_name == "kernel"]
    assert len(kernel) == 1
    assert kernel[0].tb_lineno == 5
    assert kernel[0].tb_frame.f_lineno == 5  # kept after the pop (taken over)
    assert kernel[0].tb_frame.f_back is sys._getframe()


def test_inspect_stack(exe, dsl_file):
    def callback():
        return [(fi.filename, fi.lineno, fi.function, fi.code_context)
                for fi in inspect.stack()[:3]]

    stack = framed(exe, callback)()
    assert stack[1] == (dsl_file, 4, "kernel", ["  call host(x)\n"])
    assert stack[2][2] == "test_inspect_stack"


def test_faulthandler_dump(exe, dsl_file, tmp_path):
    out = tmp_path / "dump.txt"

    def callback():
        with open(out, "w") as f:
            faulthandler.dump_traceback(f, all_threads=False)

    def caller():
        framed(exe, callback)()

    caller()
    lines = [line.strip() for line in out.read_text().splitlines()]
    i = lines.index(f'File "{dsl_file}", line 4 in kernel')
    assert "in callback" in lines[i - 1]
    assert "in caller" in lines[i + 1]


def test_current_frames_from_another_thread(exe, dsl_file):
    inside, release = threading.Event(), threading.Event()

    def callback():
        inside.set()
        release.wait(10)

    worker = threading.Thread(target=framed(exe, callback))
    worker.start()
    try:
        assert inside.wait(10)
        f = sys._current_frames()[worker.ident]
        chain = []
        while f:
            chain.append((f.f_code.co_filename, f.f_lineno, f.f_code.co_name))
            f = f.f_back
    finally:
        release.set()
        worker.join()
    names = [name for _, _, name in chain]
    assert names[names.index("callback") + 1] == "kernel"
    assert (dsl_file, 4, "kernel") in chain


def test_warnings_stacklevel(exe, dsl_file):
    def callback():
        warnings.warn("from the callback", UserWarning, stacklevel=2)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        framed(exe, callback)()
    assert [(w.filename, w.lineno) for w in caught] == [(dsl_file, 4)]


def test_settrace_enabled_mid_frame(exe):
    events = []

    def tracer(frame, event, arg):
        events.append((frame.f_code.co_name, event))
        return tracer

    def inner():
        return 1

    def callback():
        sys.settrace(tracer)
        try:
            inner()
            back = sys._getframe(1)
            assert back.f_code.co_name == "kernel" and back.f_lineno == 4
        finally:
            sys.settrace(None)

    framed(exe, callback)()
    assert ("inner", "call") in events
    assert framed(exe, lambda: sys._getframe(1).f_lineno)() == 4  # still fine afterwards


def test_every_state_keeps_its_line_after_instrumentation(exe):
    """settrace and sys.monitoring instrument every code object on the stack, the synthetic
    one too: each state's instruction is a real one (not an inline cache entry, as the one
    after RESUME is on 3.15), so f_lineno and the positions stay right afterwards."""
    def lines():
        seen = []
        for state in range(4):
            def look():
                f = sys._getframe(1)
                seen.append((f.f_lineno, list(f.f_code.co_positions())[f.f_lasti // 2][0]))
            framed(exe, look, state)()
        return seen

    expected = [(3, 3), (4, 4), (5, 5), (6, 6)]
    assert lines() == expected

    def tracer(frame, event, arg):
        return tracer

    def traced():
        sys.settrace(tracer)
        try:
            return lines()
        finally:
            sys.settrace(None)

    assert framed(exe, traced, 0)() == expected
    assert lines() == expected
    mon = sys.monitoring
    tool = mon.PROFILER_ID if mon.get_tool(mon.PROFILER_ID) is None else 5
    mon.use_tool_id(tool, "callsite-test")
    try:
        mon.set_events(tool, mon.events.LINE | mon.events.PY_START)
        mon.register_callback(tool, mon.events.LINE, lambda code, line: None)
        assert framed(exe, lines, 2)() == expected
    finally:
        mon.set_events(tool, 0)
        mon.register_callback(tool, mon.events.LINE, None)
        mon.free_tool_id(tool)
    assert lines() == expected


def test_monitoring_enabled_mid_frame(exe):
    mon = sys.monitoring
    tool = mon.PROFILER_ID
    mon.use_tool_id(tool, "callsite-test")
    starts = []
    try:
        mon.register_callback(tool, mon.events.PY_START, lambda code, off: starts.append(code.co_name))

        def inner():
            return 2

        def callback():
            mon.set_events(tool, mon.events.PY_START | mon.events.LINE)
            try:
                inner()
            finally:
                mon.set_events(tool, 0)
            return sys._getframe(1).f_lineno

        assert framed(exe, callback)() == 4
        assert "inner" in starts
    finally:
        mon.register_callback(tool, mon.events.PY_START, None)
        mon.free_tool_id(tool)


def test_frame_objects_retained_past_the_pop(exe):
    def callback():
        return sys._getframe(1)

    def caller():
        return framed(exe, callback)(), sys._getframe()

    kept, caller_frame = caller()
    gc.collect()
    assert kept.f_code.co_name == "kernel" and kept.f_lineno == 4
    assert kept.f_back is caller_frame
    assert kept.f_globals["__name__"] == kept.f_code.co_filename
    assert kept.f_builtins is caller_frame.f_builtins
    assert kept.f_locals == {}
    kept.clear()  # no longer executing
    del kept
    gc.collect()


def test_locals_stored_by_cpython_are_released(exe):
    sentinel = []

    def callback():
        sys._getframe(1).f_locals  # may make CPython store a dict in the frame
        sentinel.append(1)

    before = sys.getrefcount(sentinel)
    for _ in range(100):
        framed(exe, callback)()
    assert sys.getrefcount(sentinel) == before


def test_no_reference_leaks(exe):
    def callback():
        return sys._getframe(1)

    def failing():
        sys._getframe(1)
        raise ValueError

    code = framed(exe, callback)().f_code
    fn = framed(exe, callback)
    gc.collect()
    refs = (sys.getrefcount(code), sys.getrefcount(test_no_reference_leaks), sys.getrefcount(exe))
    for _ in range(1000):
        fn()
        try:
            framed(exe, failing)()
        except ValueError:
            pass
    gc.collect()
    assert (sys.getrefcount(code), sys.getrefcount(test_no_reference_leaks),
            sys.getrefcount(exe)) == refs


def test_push_pop_stress_with_retention_and_exceptions(exe):
    rng = random.Random(1234)
    kept = []

    def body(depth):
        if rng.random() < 0.3:
            kept.append(sys._getframe(1))
        if rng.random() < 0.1:
            raise RuntimeError(depth)
        if depth and rng.random() < 0.7:
            native.current().state = rng.randrange(6)
            try:
                framed(exe, body, rng.randrange(4))(depth - 1)
            except RuntimeError as e:
                if rng.random() < 0.5:
                    kept.append(e.__traceback__)
                if rng.random() < 0.5:
                    raise

    for i in range(5000):
        try:
            framed(exe, body)(rng.randrange(6))
        except RuntimeError:
            pass
        if len(kept) > 200:
            del kept[: rng.randrange(len(kept))]
    for f in kept:
        if inspect.isframe(f):
            assert f.f_code.co_name == "kernel"
            assert f.f_lineno in (3, 4, 5, 6, None)
    kept.clear()
    gc.collect()
    assert sys._getframe().f_code.co_name == "test_push_pop_stress_with_retention_and_exceptions"


def test_shard_switch_stress_with_readers_retention_and_exceptions():
    """Nested visible frames of two sharded executables switching shards at random, frame
    objects kept past their pop, exceptions through them, and another thread reading every
    thread's frames all along: each kept frame object ends at the line of its last state."""
    rng = random.Random(99)
    a = native.Executable("a", lambda s: native.Location("a.dsl", s + 1), visible=True,
                          states=20_000)
    b = native.Executable("b", lambda s: native.Location("b.dsl", s % 900 + 1), visible=True,
                          states=9_000)
    line = {a: lambda s: s + 1 if s < 20_000 else None,
            b: lambda s: s % 900 + 1 if s < 9_000 else None}
    states = [0, 1, 8191, 8192, 8999, 9000, 16_384, 19_999, 20_000, 10**12]
    expected = []
    stop = threading.Event()

    def reader():
        while not stop.is_set():
            for f in sys._current_frames().values():
                while f is not None:
                    f.f_lineno
                    f = f.f_back

    def body(exe, depth):
        frame, kept = native.current(), None
        for _ in range(rng.randrange(4)):
            frame.state = rng.choice(states) if rng.random() < 0.5 else rng.randrange(25_000)
            if rng.random() < 0.3:
                kept = sys._getframe(1)
        if depth and rng.random() < 0.6:
            other = rng.choice((a, b))
            try:
                native.frame(other, rng.randrange(25_000))(body)(other, depth - 1)
            except KeyError:
                pass
        if kept is not None:
            expected.append((kept, line[exe](frame.state)))
        if rng.random() < 0.1:
            raise KeyError(depth)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        for _ in range(3000):
            exe = rng.choice((a, b))
            try:
                native.frame(exe, rng.randrange(25_000))(body)(exe, rng.randrange(5))
            except KeyError:
                pass
    finally:
        stop.set()
        thread.join()
    assert len(expected) > 100
    assert [f.f_lineno for f, _ in expected] == [want for _, want in expected]


def _levels_with_locals(count):
    """Python functions with 0..count-1 extra locals: their frames take different room on the
    thread's data stack, so the visible frames between them land at every offset of a chunk."""
    levels = []
    for k in range(count):
        names = "".join(f"    v{i} = depth + {i}\n" for i in range(k))
        src = f"def level_{k}(depth, down):\n{names}    return down(depth)\n"
        namespace = {}
        exec(compile(src, f"<level_{k}>", "exec"), namespace)
        levels.append(namespace[f"level_{k}"])
    return levels


def test_frames_at_every_offset_of_the_data_stack_chunks(exe):
    """Visible frames take their memory from the thread's data stack, as CPython's frames do,
    and from the heap when the chunk is full: deep chains of Python frames of varying sizes
    and visible frames, crossing chunks, until both kinds were pushed; at the bottom every
    frame of the chain has its line, and frame objects kept from it stay readable."""
    rng = random.Random(77)
    levels = _levels_with_locals(24)
    heap_before = native._n._visible_heap_frames()
    kept = []

    def check_chain(states):
        f = sys._getframe(1)
        seen = []
        while f is not None and len(seen) < len(states):
            if f.f_code.co_name == "kernel":
                seen.append(f.f_lineno)
                if rng.random() < 0.05:
                    kept.append((f, f.f_lineno))
            f = f.f_back
        assert seen == [3 + s for s in reversed(states)]

    for attempt in range(60):
        depth = rng.randrange(60, 240)
        states = [rng.randrange(4) for _ in range(depth)]

        def down(d):
            if d == depth:
                check_chain(states)
                return d
            level = levels[rng.randrange(len(levels))]
            return framed(exe, lambda _: level(d + 1, down), states[d])(d)

        assert down(0) == depth
        if native._n._visible_heap_frames() > heap_before and attempt >= 10:
            break
    assert native._n._visible_heap_frames() > heap_before, "no push met a full chunk"
    for f, line in kept:
        assert f.f_code.co_name == "kernel" and f.f_lineno == line
    kept.clear()
    gc.collect()


def test_callsite_capture_has_one_entry_per_native_frame(exe, dsl_file):
    shadow = native.Executable("shadow", lambda s: native.Location("shadow.dsl", s), kind="dsl")
    captured = {}

    def innermost():
        captured["tb"] = callsite.capture()
        captured["oracle"] = [fs.name for fs in reversed(traceback.extract_stack())]

    def middle():
        with shadow.frame(7):  # shadow-only (the with form)
            framed(exe, innermost, 3)()

    framed(exe, middle, 0)()
    frames = [(f.kind, f.name, f.filename, f.lineno) for f in captured["tb"]]
    names = [name for _, name, _, _ in frames]
    kernels = [f for f in frames if f[1] == "kernel"]
    assert kernels == [("native", "kernel", dsl_file, 6), ("native", "kernel", dsl_file, 3)]
    i = names.index("innermost")
    assert names[i: i + 4] == ["innermost", "kernel", "shadow", "middle"]
    assert names[i + 4] == "kernel"
    assert names.count("kernel") == 2
    # CPython lists each visible frame once (no shadow frame); callsite adds the shadow one.
    oracle = captured["oracle"]
    assert [n for n in names if n != "shadow"][: len(oracle)] == oracle


def test_with_form_stays_shadow_only(exe):
    with pytest.warns(RuntimeWarning, match="decorator form"), exe.frame(1):
        assert sys._getframe(0).f_code.co_name == "test_with_form_stays_shadow_only"
        assert native.stack()[0][0] == "kernel"


def test_greenlet_switch_inside_callback(exe):
    greenlet = pytest.importorskip("greenlet", reason="greenlet is not installed")
    main = greenlet.getcurrent()

    def callback():
        main.switch("parked")
        return sys._getframe(1).f_lineno

    child = greenlet.greenlet(lambda: framed(exe, callback)())
    assert child.switch() == "parked"
    chain, f = [], child.gr_frame  # greenlet exposes the suspended chain (writes through it)
    while f:
        chain.append(f.f_code.co_name)
        f = f.f_back
    assert chain[:2] == ["callback", "kernel"]
    other = greenlet.greenlet(lambda: framed(exe, lambda: sys._getframe(1).f_lineno, 2)())
    assert other.switch() == 5
    assert child.switch() == 4
    assert child.dead


def test_behaviour_locals_and_eval_see_the_native_frame(exe):
    local_only = 41  # noqa: F841

    assert framed(exe, locals)() == {}
    assert framed(exe, eval)("__name__") == exe.reify(0).filename  # the guest's globals
    assert framed(exe, eval)("len('ab')") == 2  # and builtins
    for name in ("DSL_SOURCE", "local_only"):  # neither the caller's globals nor its locals
        with pytest.raises(NameError):
            framed(exe, eval)(name)


def test_behaviour_getframe_depths_count_the_native_frame(exe):
    assert framed(exe, sys._getframe)(0).f_code.co_name == "kernel"
    assert framed(exe, sys._getframe)(1).f_code.co_name == (
        "test_behaviour_getframe_depths_count_the_native_frame")


def test_behaviour_warnings_stacklevel_counts_the_native_frame(exe, dsl_file):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        framed(exe, warnings.warn)("direct", UserWarning, 1)
        framed(exe, warnings.warn)("direct", UserWarning, 2)
    here = test_behaviour_warnings_stacklevel_counts_the_native_frame.__code__
    assert [(w.filename, w.lineno) for w in caught][0] == (dsl_file, 4)
    assert caught[1].filename == here.co_filename


def test_behaviour_compile_loses_the_callers_future_flags(exe):
    # Reading the annotation evaluates it unless the `annotations` future (this module's)
    # made it a string: at the def before 3.14, at the first read from 3.14 (PEP 649).
    source = "def f(x: undefined_name): pass\nf.__annotations__"
    exec(compile(source, "<inherits>", "exec"), {})
    with pytest.raises(NameError):
        exec(framed(exe, compile)(source, "<native>", "exec"), {})


def test_py_spy_dump_shows_the_dsl_line(exe, dsl_file, tmp_path):
    py_spy.py_spy_path()
    ready = tmp_path / "ready"
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from callsite import native
        exe = native.Executable("kernel", kind="dsl", visible=True,
                                locations=[native.Location({dsl_file!r}, 3),
                                           native.Location({dsl_file!r}, 4)])
        def callback():
            open({str(ready)!r}, "w").close()
            time.sleep(60)
        native.frame(exe, 1)(callback)()
    """)])
    try:
        wait_for(ready)
    except AssertionError:
        child.kill()
        child.wait()
        raise
    result = py_spy.dump(child)
    lines = [line.strip() for line in result.stdout.splitlines()]
    kernel = [i for i, line in enumerate(lines) if line.startswith("kernel (")]
    assert kernel, result.stdout
    assert lines[kernel[0]] == f"kernel ({os.path.basename(dsl_file)}:4)" or \
        lines[kernel[0]] == f"kernel ({dsl_file}:4)", result.stdout
    assert lines[kernel[0] - 1].startswith("callback (")


@pytest.mark.skipif(sys.version_info < (3, 15), reason="profiling.sampling is 3.15+")
def test_profiling_sampling_reader_follows_the_frame_across_shards(tmp_path):
    """3.15's sampling profiler reads other processes with _remote_debugging.RemoteUnwinder,
    which reads the frame chain and line tables directly (no hook into callsite). With its
    frame cache on, a visible frame that moved to another shard between two samples (another
    code object, same frame address) is read afresh; `python -m profiling.sampling dump`
    prints it in place."""
    import _remote_debugging

    dsl = str(tmp_path / "big.dsl")
    ready1, go, ready2 = tmp_path / "ready1", tmp_path / "go", tmp_path / "ready2"
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import os, time
        from callsite import native
        exe = native.Executable("kernel", lambda s: native.Location({dsl!r}, s + 1),
                                kind="dsl", visible=True, states=20_000)
        def callback():
            frame = native.current()
            frame.state = 17_000
            open({str(ready1)!r}, "w").close()
            while not os.path.exists({str(go)!r}):
                time.sleep(0.01)
            frame.state = 5
            open({str(ready2)!r}, "w").close()
            time.sleep(60)
        def caller():
            native.frame(exe, 1)(callback)()
        caller()
    """)])

    def sample(unwinder):
        [interpreter] = unwinder.get_stack_trace()
        [thread] = [t for t in interpreter.threads if t.frame_info]
        return [(f.funcname, os.path.basename(f.filename), f.location.lineno)
                for f in thread.frame_info]

    try:
        wait_for(ready1)
        try:
            unwinder = _remote_debugging.RemoteUnwinder(child.pid, cache_frames=True)
            first = sample(unwinder)
        except (PermissionError, RuntimeError, OSError) as e:
            pytest.skip(f"cannot read another process here: {e}")
        go.touch()
        wait_for(ready2)
        second = sample(unwinder)
        fresh = sample(_remote_debugging.RemoteUnwinder(child.pid))
        dump = subprocess.run([sys.executable, "-m", "profiling.sampling", "dump", str(child.pid)],
                              capture_output=True, text=True, timeout=60)
    finally:
        child.kill()
        child.wait()
    assert first[0][0] == second[0][0] == "callback"
    assert first[1:3] == [("kernel", "big.dsl", 17_001), ("caller", "<string>", 16)], first
    assert second[1:3] == [("kernel", "big.dsl", 6), ("caller", "<string>", 16)], second
    assert fresh[1:] == second[1:]
    # The profiler's own command line prints it as a Python frame between its neighbours (the
    # file relative to the working directory when it is below it).
    lines = [line.strip() for line in dump.stdout.splitlines()]
    assert dump.returncode == 0, dump.stderr
    kernel = [i for i, line in enumerate(lines)
              if line.startswith('File "') and line.endswith('big.dsl", line 6, in kernel')]
    assert kernel, dump.stdout + dump.stderr
    at = kernel[0]
    assert lines[at - 1].endswith("in caller") and lines[at + 1].endswith("in callback"), lines


def test_bad_arguments():
    with pytest.raises(TypeError, match="locations"):
        native.Executable("k", kind="dsl", visible=True, locations=5)
    with pytest.raises(TypeError, match="reifier"):
        native.Executable("k", kind="dsl")
    with pytest.raises(ValueError, match="states"):
        native.Executable("k", lambda s: None, visible=True, states=-1)
    with pytest.raises(TypeError, match="states"):
        native.Executable("k", lambda s: None, visible=True, states="many")


CALC = """\
fn area(w, h)
  let a = w * h
  return scale(a)
end
"""


def test_cpp_native_frame_is_visible_through_the_calc_interpreter():
    seen = {}

    def scale(a):
        f = sys._getframe(1)
        seen["frame"] = (f.f_code.co_filename, f.f_lineno, f.f_code.co_name,
                         f.f_back.f_code.co_name)
        seen["positions"] = list(f.f_code.co_positions())[f.f_lasti // 2]
        seen["names"] = [x.name for x in callsite.capture()][:3]
        return a

    def caller():
        return program.call("area", 2, 3)

    program = CalcProgram(CALC, "area.calc", {"scale": scale}, visible=True)
    assert caller() == 6
    assert seen["frame"] == ("area.calc", 3, "area", "caller")
    assert seen["positions"] == (3, 3, 9, 17)  # the call `scale(a)`
    assert seen["names"] == ["scale", "area", "caller"]  # one entry for the C++ frame


def line_entries(code):
    return len(list(code.co_lines()))


def test_states_past_one_shard_switch_the_code_object(tmp_path):
    """Above one code object's worth of states, frame.state moves the frame to the code
    object of the state's shard; every shard stays within what remote readers accept (3.15's
    sampler: 65,536 line-table entries; py-spy: about 60 KB of table)."""
    path = str(tmp_path / "big.dsl")
    n = 40_000
    exe = native.Executable("big", lambda s: native.Location(path, s + 1, colno=0, end_colno=3),
                            kind="dsl", visible=True, states=n)
    seen = []

    def callback():
        frame = native.current()
        for state in (0, 1, 8191, 8192, 20_000, n - 1, n, 10**9, 3):
            frame.state = state
            f = sys._getframe(1)
            seen.append((state, f.f_lineno, f.f_code))
            if state == 20_000:
                seen.append(("stack", traceback.extract_stack(f, limit=1)[0].lineno, None))

    framed(exe, callback, state=5)()
    lines = {state: line for state, line, _ in seen}
    assert lines == {0: 1, 1: 2, 8191: 8192, 8192: 8193, 20_000: 20_001, n - 1: n, n: None,
                     10**9: None, 3: 4, "stack": 20_001}
    codes = {id(code): code for _, _, code in seen if code is not None}
    assert len(codes) >= 3  # states 0, 20,000 and n - 1 are in different shards
    for code in codes.values():
        assert (code.co_name, code.co_filename) == ("big", path)
        assert line_entries(code) <= 65_536 and len(code.co_linetable) <= 60_000
    # Every state of every shard reads back through the line table alone.
    shard = next(code for state, _, code in seen if state == n - 1)
    first = n - (line_entries(shard) - 2)  # RESUME and "no location" are not states
    assert [line for _, _, line in shard.co_lines()][1:4] == [first + 1, first + 2, first + 3]


def test_an_executable_with_no_located_state_shows_the_placeholder_file():
    """A reifier that locates nothing: the synthetic code's file is the "<kind:name>" that
    callsite's own captures show for the frame."""
    exe = native.Executable("nowhere", lambda state: None, kind="dsl", visible=True, states=3)
    seen = []

    def look():
        f = sys._getframe(1)
        seen.append((f.f_code.co_name, f.f_code.co_filename, f.f_lineno))
        seen.append(next((e.name, e.filename, e.lineno) for e in callsite.capture()
                         if e.kind == "native"))

    framed(exe, look, 1)()
    assert seen == [("nowhere", "<dsl:nowhere>", None), ("nowhere", "<dsl:nowhere>", None)]


def test_a_cpp_executable_whose_name_is_not_utf8_gets_its_code():
    """A C++ executable's name is bytes: the synthetic code is named as callsite names its
    frames (UTF-8 with replacement), not refused."""
    testing = pytest.importorskip("callsite._callsite_testing")
    code = testing.visible_code_of_static(b"k\xffernel", 4)
    assert (code.co_name, code.co_filename) == ("k\ufffdernel", "bench.dsl")


def test_a_frame_pushed_with_no_python_frame_below_has_its_guest_namespace():
    """A thread started from C has no Python frame: the visible frame is the bottom of the
    chain, with its guest file's globals and builtins as everywhere (never NULL: faulthandler
    stops at a frame without them), and still shows its line."""
    testing = pytest.importorskip("callsite._callsite_testing")
    seen = {}

    def callback():
        f = sys._getframe(1)
        seen["frame"] = (f.f_code.co_name, f.f_code.co_filename, f.f_lineno, f.f_back)
        seen["globals"] = (f.f_globals["__name__"], f.f_builtins is builtins.__dict__)
        seen["stack"] = [(e.name, e.lineno) for e in traceback.extract_stack()]
        return 7

    assert testing.call_in_visible_frame_on_new_thread(callback, 5) == 7
    assert seen["frame"] == ("bench", "bench.dsl", 6, None)
    assert seen["globals"] == ("bench.dsl", True)
    assert seen["stack"] == [("bench", 6), ("callback", seen["stack"][1][1])]

    def raises():
        raise ValueError("in the callback")

    with pytest.raises(ValueError, match="in the callback") as info:
        testing.call_in_visible_frame_on_new_thread(raises, 2)
    assert [(e.name, e.lineno) for e in traceback.extract_tb(info.tb)][-2:] == [
        ("bench", 3), ("raises", raises.__code__.co_firstlineno + 1)]


def test_frames_and_tracebacks_kept_past_a_shard_switch(tmp_path):
    """The frame object a tool made before the frame moved to another shard follows it (one
    frame object per interpreter frame); after the pop it keeps the code and line of the shard
    the frame ran last, as the traceback of an exception raised there does."""
    path = str(tmp_path / "kept.dsl")
    exe = native.Executable("kept", lambda s: native.Location(path, s + 1), visible=True,
                            states=20_000)
    kept = {}

    def callback():
        frame = native.current()
        kept["before"] = sys._getframe(1)
        frame.state = 17_000
        kept["after"] = sys._getframe(1)
        raise KeyError("deep")

    with pytest.raises(KeyError) as info:
        framed(exe, callback, state=3)()
    gc.collect()
    entries = [(frame.f_code.co_name, line)
               for frame, line in traceback.walk_tb(info.value.__traceback__)]
    assert ("kept", 17_001) in entries
    assert kept["before"] is kept["after"]  # one frame object per interpreter frame
    assert kept["after"].f_lineno == 17_001 and kept["after"].f_code.co_filename == path
    assert kept["after"].f_back is not None


def test_a_shard_whose_columns_do_not_fit_keeps_its_lines(tmp_path):
    """Wide columns and jumping lines make long line-table entries: a shard that would exceed
    the readers' table size keeps lines only."""
    path = str(tmp_path / "wide.dsl")

    def where(s):
        return native.Location(path, (s * 7919) % 200_000 + 1, colno=5000, end_colno=9000)

    exe = native.Executable("wide", where, visible=True, states=8192)
    seen = []

    def callback():
        frame = native.current()
        for state in (0, 4321, 8191):
            frame.state = state
            f = sys._getframe(1)
            seen.append((f.f_lineno, list(f.f_code.co_positions())[f.f_lasti // 2], f.f_code))

    framed(exe, callback)()
    assert [line for line, _, _ in seen] == [where(s).lineno for s in (0, 4321, 8191)]
    assert [pos[2:] for _, pos, _ in seen] == [(None, None)] * 3
    assert len(seen[0][2].co_linetable) <= 60_000


def test_reifier_that_pushes_its_own_executable_while_the_code_is_built():
    """The build runs the reifier, which may push a frame of the same executable (building the
    code re-entrantly): one code per executable all the same."""
    inner = []

    def reifier(state):
        if not inner:
            inner.append(None)
            inner[0] = native.frame(exe, 0)(lambda: sys._getframe(1).f_code)()
        return native.Location("re.dsl", state + 1)

    def callback():
        return sys._getframe(1).f_lineno, sys._getframe(1).f_code

    exe = native.Executable("re", reifier, visible=True, states=10)
    (line4, code4), (line5, code5) = framed(exe, callback, 4)(), framed(exe, callback, 5)()
    assert (line4, line5) == (5, 6) and code4 is code5 is inner[0]


def test_states_above_the_limit_are_refused():
    for states in (2**20 + 1, 10**30, -1):
        with pytest.raises(ValueError, match=rf"states must be in \[0, 1048576\].*got {states}$"):
            native.Executable("huge", lambda s: None, visible=True, states=states)
    too_many = r"locations must have at most 1048576 items .*got 1048577$"
    with pytest.raises(ValueError, match=too_many):
        native.Executable("huge", visible=True, locations=[None] * (2**20 + 1))


def test_cpp_set_state_crosses_shards_through_the_calc_interpreter():
    """The calc interpreter's states are statement ids: a function of 9,000 statements moves
    its C++ NativeFrame across shards with set_state."""
    seen = []

    def probe(a):
        f = sys._getframe(1)
        seen.append((f.f_lineno, f.f_code.co_name, id(f.f_code)))
        return a

    body = "".join(f"  let a{i} = a{i - 1} + 1\n" for i in range(1, 9000))
    source = (f"fn big(x)\n  let a0 = probe(x)\n{body}  let b = probe(a8999)\n"
              f"  return probe(a0) + b\nend\n")
    program = CalcProgram(source, "big.calc", {"probe": probe}, visible=True)
    assert program.call("big", 1.0) == 1.0 + 9000.0
    assert [(line, name) for line, name, _ in seen] == [(2, "big"), (9002, "big"), (9003, "big")]
    assert seen[0][2] != seen[1][2] and seen[2][2] == seen[1][2]


def test_cpp_native_frame_exception_entry():
    def check(a):
        raise ValueError(a)

    program = CalcProgram(CALC.replace("scale", "check"), "bad.calc", {"check": check},
                                  visible=True)
    with pytest.raises(ValueError) as info:
        program.call("area", 2, 3)
    entries = [(fs.filename, fs.lineno, fs.name, fs.line)
               for fs in traceback.extract_tb(info.value.__traceback__)]
    assert entries[-2:] == [("bad.calc", 3, "area", "return check(a)"),
                            (__file__, entries[-1][1], "check", "raise ValueError(a)")]


def test_cpp_native_frame_with_the_public_backend():
    """The public walk's marker comes from frame objects: the C++ push takes it before linking
    its interpreter frame, so the capture still shows one entry per frame, in order."""
    seen = {}

    def scale(a):
        seen["names"] = [x.name for x in callsite.capture()][:3]
        seen["back"] = sys._getframe(1).f_code.co_name
        return a

    def caller():
        return program.call("area", 2, 3)

    program = CalcProgram(CALC, "area.calc", {"scale": scale}, visible=True)
    before = callsite.get_backend()
    callsite.set_backend("public")
    try:
        assert caller() == 6
    finally:
        callsite.set_backend(before)
    assert seen["back"] == "area"
    assert seen["names"] == ["scale", "area", "caller"]
