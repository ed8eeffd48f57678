"""NativeFrame objects whose last reference went are kept for the next frame made (the
decorator makes one per call): a reused object must be indistinguishable from a new one, and
an object anyone still holds is never reused."""
import gc
import weakref

import pytest

import callsite
from callsite import native


@pytest.fixture
def exes():
    return (native.Executable("first", lambda pc: ("first.dsl", pc + 1)),
            native.Executable("second", lambda pc: ("second.dsl", pc + 1)))


def test_a_frame_made_after_one_died_starts_fresh(exes):
    first, second = exes
    for _ in range(100):  # more than any number of objects kept
        frame = native.NativeFrame(first, 7)
        frame.push()
        frame.state = 9
        frame.pop()
        del frame
    fresh = native.NativeFrame(second)
    assert (fresh.executable, fresh.state, fresh.active) == (second, 0, False)
    assert repr(fresh) == "<callsite.native.NativeFrame of 'second' state=0>"
    with fresh:
        assert callsite.capture()[0].filename == "second.dsl"
        assert native.current() is fresh
    assert gc.is_tracked(fresh)


def test_weak_references_die_with_the_call_and_never_see_the_next(exes):
    first, _ = exes
    refs = []

    @native.frame(first, 3)
    def call():
        refs.append(weakref.ref(native.current()))

    call()
    assert refs[0]() is None  # the call's frame is gone: its weak reference too
    call()
    assert refs[0]() is None and refs[1]() is None


def test_frames_held_after_their_call_stay_distinct_and_keep_their_state(exes):
    first, second = exes
    held = []

    @native.frame(first, 1)
    def outer(depth):
        native.current().state = depth
        held.append(native.current())
        if depth < 5:
            inner(depth + 1)

    @native.frame(second, 2)
    def inner(depth):
        native.current().state = 100 + depth
        held.append(native.current())
        outer(depth + 1)

    outer(0)
    for _ in range(50):
        outer(5)  # more calls: reused objects must not be the held ones
    assert len({id(f) for f in held[:6]}) == 6
    assert [(f.executable, f.state, f.active) for f in held[:6]] == \
        [(first, 0, False), (second, 101, False), (first, 2, False), (second, 103, False),
         (first, 4, False), (second, 105, False)]


def test_a_state_store_through_any_spelling_of_the_name_behaves_the_same(exes):
    """`frame.state = pc` takes a shortcut for the interned name compiled code passes;
    any other str object naming `state`, and every other attribute, take the generic path."""
    first, _ = exes
    frame = native.NativeFrame(first)
    name = "".join(["sta", "te"])  # equal to "state", not the same object
    setattr(frame, name, 5)
    assert frame.state == 5
    frame.state = 6
    assert getattr(frame, name) == 6
    for spelling in ("state", name):
        with pytest.raises(TypeError, match="state must be an int, not bool"):
            setattr(frame, spelling, True)
        with pytest.raises(AttributeError, match="cannot delete"):
            delattr(frame, spelling)
    assert frame.state == 6
    with pytest.raises(AttributeError):
        frame.other = 1
    with pytest.raises(AttributeError):
        frame.active = False


def test_current_is_one_object_through_a_call_whose_callees_finished(exes):
    """The frames of finished calls are reused at once: the running call's frame is not."""
    first, second = exes
    seen = []

    @native.frame(second, 4)
    def callee(i):
        assert native.current().state == 4  # a reused object starts at the wrapper's state
        native.current().state = 50 + i

    @native.frame(first, 1)
    def caller():
        mine = native.current()
        mine.state = 2
        for i in range(40):  # more calls than objects kept
            callee(i)
            seen.append(native.current())
        assert mine.active and mine.state == 2 and mine.executable is first

    caller()
    assert all(f is seen[0] for f in seen)
    assert seen[0].active is False


def test_no_kept_frame_object_is_reachable_through_the_collector(exes):
    first, _ = exes

    @native.frame(first, 3)
    def call(depth):
        if depth:
            call(depth - 1)

    for _ in range(10):
        call(40)
    gc.collect()
    frames = [o for o in gc.get_objects() if type(o) is native.NativeFrame]
    assert frames == []


def test_an_executable_is_released_after_its_last_framed_call():
    exe = native.Executable("released", lambda pc: ("released.dsl", pc + 1))
    dead = weakref.ref(exe)

    @native.frame(exe, 0)
    def call():
        return native.current().executable.name

    assert [call() for _ in range(3)] == ["released"] * 3
    del call, exe
    gc.collect()
    assert dead() is None


def test_a_locals_store_through_any_spelling_of_the_name_behaves_the_same(exes):
    """`frame.locals = env` takes the same shortcut as `state`."""
    first, _ = exes
    frame = native.NativeFrame(first)
    name = "".join(["loc", "als"])  # equal to "locals", not the same object
    variables = {"x": 1}
    setattr(frame, name, variables)
    assert frame.locals is variables
    frame.locals = None
    assert getattr(frame, name) is None
    for spelling in ("locals", name):
        with pytest.raises(TypeError, match="locals must be a mapping"):
            setattr(frame, spelling, 5)
    frame.locals = variables
    with frame:
        assert callsite.capture()[0].locals == {"x": 1}
    del frame.locals
    assert frame.locals is None
