"""Each activation its own variables: a frame handle's `locals` (`native.current().locals = ...`
inside a decorated function, or on the handle `with exe.frame()` yields) overrides its
executable's `locals=` for that activation only, read only when someone looks, frozen at the
pop. The oracle is CPython's own readers: `sys._getframe` walks, `inspect.stack()`,
traceback frames, `traceback.TracebackException(capture_locals=True)`."""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import textwrap
import traceback
import warnings

import pytest

import callsite
from callsite import native

VISIBLE = sys.version_info[:2] >= (3, 12) and native.visible_frames_available()
needs_visible = pytest.mark.skipif(not VISIBLE, reason="no visible native frames here")

ENTRY, CALL, RETURN = 0, 1, 2  # the guest function's states: its lines in prog.dsl
LOCATIONS = [native.Location("prog.dsl", 1 + k, name="fact") for k in range(3)]


@pytest.fixture(params=[True, False], ids=["visible", "shadow"])
def visible(request):
    """Both kinds of guest frames: visible (3.12+) and shadow-only."""
    if request.param and not VISIBLE:
        pytest.skip("no visible native frames here")
    return request.param


def fact_executable(visible, **kwargs):
    """One executable for the guest function `fact` (every activation shares it)."""
    if visible:
        return native.Executable("fact", locations=LOCATIONS, visible=True, **kwargs)
    return native.Executable("fact", locations=LOCATIONS, **kwargs)


def guest_fact(exe, at_bottom, as_callable=False, calls=None):
    """A recursive guest function as a tree-walking interpreter runs it: a Python call per
    guest call, its environment a dict, handed to the activation's frame."""

    @exe.frame(state=ENTRY)
    def fact(n):
        env = {"n": n}
        frame = native.current()
        if as_callable:
            def read(state, env=env):
                if calls is not None:
                    calls.append(env["n"])
                return dict(env, state=state)
            frame.locals = read
        else:
            frame.locals = env
        if n == 0:
            frame.state = RETURN
            return at_bottom()
        frame.state = CALL
        env["below"] = fact(n - 1)
        return env["below"] * n

    return fact


def guest_frames(tb):
    return [f for f, _ in traceback.walk_tb(tb) if f.f_code.co_filename == "prog.dsl"]


def visible_guest_frames():
    """The guest frames on the calling thread's frame chain, innermost first."""
    out, f = [], sys._getframe()
    while f is not None:
        if f.f_code.co_filename == "prog.dsl":
            out.append(f)
        f = f.f_back
    return out


# --- live readers (visible frames, 3.12+) ---------------------------------------------------


@needs_visible
@pytest.mark.parametrize("as_callable", [False, True], ids=["mapping", "callable"])
def test_getframe_walk_shows_each_activation(as_callable):
    seen = []

    def at_bottom():
        seen.extend(dict(f.f_locals) for f in visible_guest_frames())
        return 1

    exe = fact_executable(True)
    assert guest_fact(exe, at_bottom, as_callable)(3) == 6
    if as_callable:
        assert seen == [{"n": 0, "state": RETURN}] + [{"n": k, "state": CALL} for k in (1, 2, 3)]
    else:
        assert seen == [{"n": 0}] + [{"n": k} for k in (1, 2, 3)]


@needs_visible
def test_inspect_stack_shows_each_activation():
    seen = []

    def at_bottom():
        seen.extend((i.lineno, dict(i.frame.f_locals)) for i in inspect.stack()
                    if i.filename == "prog.dsl")
        return 1

    guest_fact(fact_executable(True), at_bottom)(2)
    assert seen == [(3, {"n": 0}), (2, {"n": 1}), (2, {"n": 2})]


@needs_visible
def test_live_reads_follow_the_environment():
    frames = []

    def at_bottom():
        frames.extend(visible_guest_frames())
        return 1

    exe = fact_executable(True)

    @exe.frame(state=ENTRY)
    def outer():
        env = {"x": 1}
        native.current().locals = env
        inner_frames = []

        @exe.frame(state=ENTRY)
        def inner():
            native.current().locals = {"y": 2}
            inner_frames.extend(visible_guest_frames())
            first = [dict(f.f_locals) for f in inner_frames]
            env["x"] = 5
            return first, [dict(f.f_locals) for f in inner_frames]

        return inner()

    first, second = outer()
    assert first == [{"y": 2}, {"x": 1}]
    assert second == [{"y": 2}, {"x": 5}]


# --- callsite's captures, live (every version) ------------------------------------------------


@pytest.mark.parametrize("as_callable", [False, True], ids=["mapping", "callable"])
def test_captures_show_each_activation(visible, as_callable):
    seen = {}

    def at_bottom():
        tb = callsite.capture()
        native_frames = [f for f in tb if f.kind == "native"]
        seen["indexed"] = [f.locals["n"] for f in native_frames]
        seen["frames"] = [f.locals["n"] for f in tb.frames if f.kind == "native"]
        seen["reversed"] = [f.locals["n"] for f in reversed(tb) if f.kind == "native"]
        return 1

    guest_fact(fact_executable(visible), at_bottom, as_callable)(3)
    assert seen == {"indexed": [0, 1, 2, 3], "frames": [0, 1, 2, 3], "reversed": [3, 2, 1, 0]}


# --- post-mortem readers (every version) -----------------------------------------------------


@pytest.mark.parametrize("as_callable", [False, True], ids=["mapping", "callable"])
def test_traceback_frames_show_each_activation(visible, as_callable):

    def at_bottom():
        raise ValueError("bottom")

    calls = []
    with pytest.raises(ValueError) as info:
        guest_fact(fact_executable(visible), at_bottom, as_callable, calls)(3)
    frames = guest_frames(info.value.__traceback__)
    got = [{k: v for k, v in f.f_locals.items() if k != "state"} for f in frames]
    assert got == [{"n": 3}, {"n": 2}, {"n": 1}, {"n": 0}]
    te = traceback.TracebackException.from_exception(info.value, capture_locals=True)
    assert [fs.locals["n"] for fs in te.stack if fs.filename == "prog.dsl"] == ["3", "2", "1", "0"]
    if as_callable:
        # read once per activation, as the exception passed it; later readers call nothing
        assert sorted(calls) == [0, 1, 2, 3]


def test_frozen_as_the_exception_passed(visible):
    exe = fact_executable(visible)
    env = {"v": "at raise"}

    @exe.frame(state=ENTRY)
    def body():
        native.current().locals = env
        raise ValueError("x")

    with pytest.raises(ValueError) as info:
        body()
    env["v"] = "changed after"
    assert [dict(f.f_locals) for f in guest_frames(info.value.__traceback__)] == [{"v": "at raise"}]


def test_with_handle_and_executable_default(visible):
    exe = fact_executable(visible, locals=lambda s: {"from": "executable"})

    @exe.frame(state=ENTRY)
    def plain():
        raise ValueError("plain")

    with pytest.raises(ValueError) as info:
        plain()
    assert [dict(f.f_locals) for f in guest_frames(info.value.__traceback__)] == [
        {"from": "executable"}]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # visible executable pushed by `with`
        with pytest.raises(ValueError) as info:
            with exe.frame(state=CALL) as f:
                f.locals = {"from": "activation"}
                assert f.locals == {"from": "activation"}
                raise ValueError("with")
    assert [dict(g.f_locals) for g in guest_frames(info.value.__traceback__)] == [
        {"from": "activation"}]
    assert f.locals is None  # it belonged to that activation


# --- laziness, clearing, bad input ------------------------------------------------------------


def test_nobody_reading_calls_nothing(visible):
    calls = []
    fact = guest_fact(fact_executable(visible), lambda: 1, as_callable=True, calls=calls)
    for _ in range(200):
        assert fact(5) == 120
    assert calls == []


def test_clearing_falls_back_to_the_executable(visible):
    exe = fact_executable(visible, locals=lambda s: {"from": "executable"})

    @exe.frame(state=ENTRY)
    def body(how):
        frame = native.current()
        frame.locals = {"from": "activation"}
        if how == "none":
            frame.locals = None
        else:
            del frame.locals
        assert frame.locals is None
        raise ValueError(how)

    for how in ("none", "del"):
        with pytest.raises(ValueError) as info:
            body(how)
        assert [dict(f.f_locals) for f in guest_frames(info.value.__traceback__)] == [
            {"from": "executable"}]


@pytest.mark.parametrize("bad", [3, "names", [("x", 1)], ("x",)], ids=["int", "str", "list", "tuple"])
def test_bad_locals_are_refused_clearly(bad):
    exe = fact_executable(False)
    with exe.frame() as f:
        with pytest.raises(TypeError) as info:
            f.locals = bad
        message = str(info.value)
        assert "locals" in message and "mapping" in message and "callable" in message
        assert type(bad).__name__ in message
        assert f.locals is None


def test_locals_given_before_the_push_belong_to_the_next_activation():
    """A loop interpreter makes an activation's frame, gives it its variables, then pushes it."""
    exe = fact_executable(False)
    f = exe.frame(state=1)
    f.locals = {"x": 1}
    assert f.locals == {"x": 1}
    f.push()
    try:
        [entry] = [fr for fr in callsite.capture() if fr.kind == "native"]
        assert entry.locals == {"x": 1}
    finally:
        f.pop()
    assert f.locals is None  # the activation's pop forgets them
    f.push()
    try:
        [entry] = [fr for fr in callsite.capture() if fr.kind == "native"]
        assert entry.locals != {"x": 1}
    finally:
        f.pop()


def test_locals_given_to_a_frame_never_pushed_are_released():
    import gc, weakref

    class Env(dict):
        pass

    env = Env(x=1)
    ref = weakref.ref(env)
    f = fact_executable(False).frame()
    f.locals = env
    del env, f
    gc.collect()
    assert ref() is None


# --- pdb, driven in a subprocess --------------------------------------------------------------

PDB_SCRIPT = textwrap.dedent("""
    import pdb, sys
    from callsite import native
    exe = native.Executable("fact", locations=[native.Location("prog.dsl", 1 + k, name="fact")
                                               for k in range(2)], visible=%(visible)s)

    @exe.frame(state=0)
    def fact(n):
        native.current().locals = {"guest_n": n}
        if n == 0:
            %(bottom)s
        native.current().state = 1
        return n * fact(n - 1)

    %(main)s
""")

# from the innermost Python frame: up to each guest frame in turn (a Python frame of `fact`
# sits between two guest frames)
PDB_WALK = "up\np guest_n\nup\nup\np guest_n\nup\nup\np guest_n\n"


def run_pdb(visible, bottom, main, commands):
    code = PDB_SCRIPT % {"visible": visible, "bottom": bottom, "main": main}
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], input=commands, capture_output=True,
                          text=True, env=env, timeout=120).stdout


def test_pdb_post_mortem_shows_each_activation(visible):
    out = run_pdb(visible, "raise ValueError('x')",
                  "try:\n    fact(2)\nexcept ValueError as e:\n    pdb.post_mortem(e.__traceback__)",
                  PDB_WALK + "quit\n")
    printed = [line.split("(Pdb) ")[-1] for line in out.splitlines()
               if line.split("(Pdb) ")[-1].strip().isdigit()]
    assert printed == ["0", "1", "2"], out


@needs_visible
def test_pdb_live_shows_each_activation():
    out = run_pdb(True, "pdb.set_trace(); return 1", "fact(2)", PDB_WALK + "continue\n")
    printed = [line.split("(Pdb) ")[-1] for line in out.splitlines()
               if line.split("(Pdb) ")[-1].strip().isdigit()]
    assert printed == ["0", "1", "2"], out
