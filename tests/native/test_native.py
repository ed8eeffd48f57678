"""Native frames on the shadow stack: interleaving with Python frames, threads, generators,
the decorator form, and pops out of order. CPython's own stack (traceback.extract_stack) is
the oracle for the Python frames; the reifiers' results for the native ones."""
import gc
import sys
import threading
import traceback

import pytest

import callsite
from callsite import native
from callsite._calc import Program as CalcProgram


def where(tag):
    """A reifier saying 'file <tag>.dsl, line state'."""
    return lambda state: native.Location(f"{tag}.dsl", state, name=f"{tag}_fn")


A = native.Executable("a", where("a"), kind="dsl")
B = native.Executable("b", where("b"), kind="dsl")
C = native.Executable("c", where("c"), kind="dsl")


def summary(tb):
    """(kind, filename, lineno, name) per frame, innermost first."""
    return [(f.kind, f.filename, f.lineno, f.name) for f in tb]


def capture_with_oracle():
    """A capture and CPython's view of the same stack, taken on the same line."""
    tb, stack = callsite.capture(skip=1), traceback.extract_stack(sys._getframe(1))
    return tb, [(fs.filename, fs.lineno, fs.name) for fs in reversed(stack)]


def python_part(tb):
    return [(f.filename, f.lineno, f.name) for f in tb if f.kind == "python"]


def test_no_native_frames_by_default():
    assert native.stack() == []
    assert all(f.kind == "python" for f in callsite.capture())


def test_nested_python_native_python_native():
    program = CalcProgram("fn k(x)\n  return host(x)\nend\n", "k.calc",
                                  {"host": lambda x: level3()})
    seen = {}

    def level1():
        with A.frame(11):
            return level2()

    def level2():
        return program.call("k", 1)  # C++ native frame k

    def level3():
        with B.frame(22):
            seen["tb"], seen["oracle"] = level4()
        return 0

    def level4():
        return capture_with_oracle()

    level1()
    tb, oracle = seen["tb"], seen["oracle"]
    assert python_part(tb) == oracle
    # True call order, innermost first: each native frame sits just inside its caller.
    assert [(f.kind, f.name) for f in tb][:9] == [
        ("python", "level4"),
        ("native", "b_fn"),
        ("python", "level3"),
        ("python", "<lambda>"),
        ("native", "k"),
        ("python", "level2"),
        ("native", "a_fn"),
        ("python", "level1"),
        ("python", "test_nested_python_native_python_native"),
    ]
    native_frames = [(f.filename, f.lineno) for f in tb if f.kind == "native"]
    assert native_frames == [("b.dsl", 22), ("k.calc", 2), ("a.dsl", 11)]


def test_state_is_read_at_capture_time():
    with A.frame(1) as f:
        first = callsite.capture()
        f.state = 7
        second = callsite.capture()
    # Pushed by this function, the native frame is its callee: innermost here.
    assert first[0].kind == second[0].kind == "native"
    assert (first[0].lineno, second[0].lineno) == (1, 7)
    assert first[0].state == 1 and second[0].state == 7


def test_frames_in_the_same_python_frame_nest():
    with A.frame(1):
        with B.frame(2):
            with C.frame(3):
                tb = callsite.capture()
                assert [s[:2] for s in native.stack()] == [("c", "dsl"), ("b", "dsl"),
                                                           ("a", "dsl")]
    assert [f.filename for f in tb[:3]] == ["c.dsl", "b.dsl", "a.dsl"]
    assert tb[3].name == "test_frames_in_the_same_python_frame_nest"
    assert native.stack() == []


def test_skip_and_limit_count_native_frames():
    with A.frame(1):
        tb = callsite.capture(limit=1)
        skipped = callsite.capture(skip=1, limit=1)
    assert len(tb) == len(skipped) == 1
    assert (tb[0].kind, tb[0].filename) == ("native", "a.dsl")
    assert (skipped[0].kind, skipped[0].name) == ("python", "test_skip_and_limit_count_native_frames")


def test_threads_have_their_own_stacks():
    barrier = threading.Barrier(3)
    results = {}

    def worker(exe, state):
        with exe.frame(state):
            barrier.wait()  # all three frames are active at once
            results[exe.name] = (summary(callsite.capture()), native.stack())
            barrier.wait()

    threads = [threading.Thread(target=worker, args=(exe, n)) for n, exe in enumerate((A, B), 1)]
    for t in threads:
        t.start()
    with C.frame(9):
        barrier.wait()
        mine = native.stack()
        barrier.wait()
    for t in threads:
        t.join()
    assert mine == [("c", "dsl", 9)]
    for name, state in (("a", 1), ("b", 2)):
        frames, stack = results[name]
        assert stack == [(name, "dsl", state)]
        natives = [f for f in frames if f[0] == "native"]
        assert natives == [("native", f"{name}.dsl", state, f"{name}_fn")]
        assert frames[0][0] == "native" and frames[1][3] == "worker"


def gen_with_frame(log):
    with A.frame(1) as f:
        log.append(summary(callsite.capture()))
        yield
        f.state = 2
        log.append(summary(callsite.capture()))
        yield


def test_generator_frames_follow_the_generator():
    log = []
    g = gen_with_frame(log)
    next(g)
    # Suspended: its native frame is not on the consumer's stack.
    assert native.stack() == []
    assert all(f.kind == "python" for f in callsite.capture())
    with B.frame(5):
        assert [s[0] for s in native.stack()] == ["b"]
        next(g)  # resumed inside B's frame
    here = "test_generator_frames_follow_the_generator"
    # The frame pushed by the generator is its callee: innermost when it captures.
    assert [(k, n) for k, _, _, n in log[0][:3]] == [
        ("native", "a_fn"), ("python", "gen_with_frame"), ("python", here)]
    assert log[0][0] == ("native", "a.dsl", 1, "a_fn")
    # its frame (state now 2) → gen body → B, pushed by this function → this function
    assert [(k, n) for k, _, _, n in log[1][:4]] == [
        ("native", "a_fn"), ("python", "gen_with_frame"), ("native", "b_fn"), ("python", here)]
    assert log[1][0] == ("native", "a.dsl", 2, "a_fn")
    assert log[1][2] == ("native", "b.dsl", 5, "b_fn")
    with pytest.raises(StopIteration):
        next(g)
    assert native.stack() == []


def test_generator_frame_in_call_order():
    log = []

    def consumer():
        g = gen_with_frame(log)
        next(g)
        with B.frame(5):
            next(g)
        g.close()

    consumer()
    names = [s[3] for s in log[1]]
    # its native frame → gen body → B (pushed by consumer) → consumer → this test
    assert names[:5] == ["a_fn", "gen_with_frame", "b_fn", "consumer",
                         "test_generator_frame_in_call_order"]


def test_generator_resumed_on_another_thread():
    log = []
    g = gen_with_frame(log)
    next(g)
    done = []
    t = threading.Thread(target=lambda: done.append((next(g, None), native.stack())))
    t.start()
    t.join()
    assert native.stack() == []
    assert done[0][1] == []  # back on the thread, suspended again
    assert log[1][0] == ("native", "a.dsl", 2, "a_fn")
    assert log[1][1][3] == "gen_with_frame"
    assert log[1][2][3] == "<lambda>"  # the thread's own caller, not this thread's
    g.close()
    assert native.stack() == []


def test_closed_generator_pops_its_frame():
    log = []
    g = gen_with_frame(log)
    next(g)
    del g
    gc.collect()
    assert native.stack() == []


def test_coroutine_frames():
    async def coro():
        with A.frame(3):
            await Suspend()
            return summary(callsite.capture())

    class Suspend:
        def __await__(self):
            yield

    c = coro()
    c.send(None)
    assert native.stack() == []
    with pytest.raises(StopIteration) as stop:
        c.send(None)
    frames = stop.value.value
    assert frames[0] == ("native", "a.dsl", 3, "a_fn") and frames[1][3] == "coro"


def test_out_of_order_pop_raises_and_unlinks():
    a, b = A.frame(1), B.frame(2)
    a.push()
    b.push()
    with pytest.raises(RuntimeError, match=r"'a' popped out of order: a frame of 'b'"):
        a.pop()
    assert not a.active and b.active
    assert [s[0] for s in native.stack()] == ["b"]
    b.pop()
    assert native.stack() == []
    with pytest.raises(RuntimeError, match="not active"):
        b.pop()


def test_double_push_is_an_error():
    f = A.frame()
    with f:
        with pytest.raises(RuntimeError, match="already active"):
            f.push()
    assert not f.active
    with f:  # reusable once popped
        assert f.active


def test_pop_on_another_thread_is_an_error():
    f = A.frame(1)
    f.push()
    errors = []

    def other():
        try:
            f.pop()
        except RuntimeError as e:
            errors.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert errors and "another thread" in errors[0]
    assert f.active
    f.pop()
    assert native.stack() == []


def test_decorator_pushes_a_fresh_frame_per_call():
    @native.frame(A, 4)
    def recurse(n):
        frame = native.current()
        frame.state = 100 + n
        if n == 0:
            return callsite.capture(), native.stack()
        return recurse(n - 1)

    tb, stack = recurse(2)
    assert stack == [("a", "dsl", 100), ("a", "dsl", 101), ("a", "dsl", 102)]
    names = [f.name for f in tb][:6]
    assert names == ["recurse", "a_fn", "recurse", "a_fn", "recurse", "a_fn"]
    assert native.current() is None


def test_decorator_keeps_metadata_and_binds_methods():
    class K:
        @native.frame(B)
        def method(self, x):
            """doc"""
            return self, x, native.stack()

    k = K()
    assert k.method(3) == (k, 3, [("b", "dsl", 0)])
    assert isinstance(K.__dict__["method"], native.FramedFunction)
    assert K.__dict__["method"].__wrapped__.__name__ == "method"


def test_current_is_the_innermost_python_frame():
    assert native.current() is None
    with A.frame(1) as outer:
        assert native.current() is outer
        with B.frame(2) as inner:
            assert native.current() is inner
        assert native.current() is outer


def test_state_validation():
    f = A.frame()
    with pytest.raises(TypeError, match="state must be an int, not str"):
        f.state = "x"
    with pytest.raises(OverflowError):
        f.state = -1
    with pytest.raises(TypeError):
        f.state = True
    f.state = 2**64 - 1
    assert f.state == 2**64 - 1
    with pytest.raises(TypeError, match="callsite.native.Executable"):
        native.NativeFrame(object())


def test_with_blocks_do_not_leak():
    exe = native.Executable("leak", where("leak"))
    f = exe.frame()
    gc.collect()
    before = sys.getrefcount(exe), sys.getrefcount(f)
    for i in range(1000):
        with f:
            f.state = i
        with exe.frame():
            pass
        native.frame(exe)(len)("x")
    gc.collect()
    assert (sys.getrefcount(exe), sys.getrefcount(f)) == before


def test_public_backend_interleaves_the_same():
    def take():
        with A.frame(1):
            return summary(callsite.capture())

    backend = callsite.get_backend()
    try:
        internal = take()
        callsite.set_backend("public")
        public = take()
    finally:
        callsite.set_backend(backend)
    assert [(s[0], s[3]) for s in internal] == [(s[0], s[3]) for s in public]
    assert public[:2] == [("native", "a.dsl", 1, "a_fn"),
                          ("python", __file__, public[1][2], "take")]
