"""Reifiers run lazily, once per (executable, state), and their failures become a single
warning and a placeholder frame — never a crash."""
import gc
import warnings
import weakref

import pytest

import callsite
from callsite import native


class Counting:
    """A reifier that counts its calls."""

    def __init__(self, filename="count.dsl"):
        self.calls = []
        self.filename = filename

    def __call__(self, state):
        self.calls.append(state)
        return native.Location(self.filename, state + 1, colno=2, end_colno=5)


def capture_in(exe, state):
    with exe.frame(state):
        return callsite.capture()


def test_capture_does_not_reify():
    reifier = Counting()
    exe = native.Executable("lazy", reifier)
    tbs = [capture_in(exe, s) for s in range(5)]
    assert reifier.calls == []
    assert [len(tb) for tb in tbs] == [len(tbs[0])] * 5
    assert tbs[0].raw()[0] == ("native", 0)
    assert reifier.calls == []  # raw() does not symbolize either
    frame = tbs[3][0]
    assert reifier.calls == [3]
    assert (frame.kind, frame.filename, frame.lineno, frame.colno, frame.end_colno) == (
        "native", "count.dsl", 4, 2, 5)


def test_results_are_cached_per_state():
    reifier = Counting()
    exe = native.Executable("cached", reifier)
    a, b, c = capture_in(exe, 1), capture_in(exe, 1), capture_in(exe, 2)
    before = native.cache_info()
    for _ in range(3):
        assert a[0].lineno == b[0].lineno == 2
        assert c[0].lineno == 3
    assert reifier.calls == [1, 2]
    after = native.cache_info()
    assert after["misses"] - before["misses"] == 2
    assert after["hits"] - before["hits"] == 9 - 2
    assert exe.reify(1).lineno == 2 and reifier.calls == [1, 2]
    assert exe.reify(9).lineno == 10 and reifier.calls == [1, 2, 9]


def test_cache_dies_with_the_executable():
    exe = native.Executable("mortal", Counting())
    capture_in(exe, 1)[0], capture_in(exe, 2)[0]
    gc.collect()
    size = native.cache_info()["entries"]
    del exe
    gc.collect()
    assert native.cache_info()["entries"] == size - 2


def test_cache_is_bounded_for_states_that_never_repeat():
    reifier = Counting()
    exe = native.Executable("pc", reifier)
    generation = native.cache_info()["generation"]
    before = native.cache_info()["entries"]
    tb = capture_in(exe, 5)
    kept = tb[0]
    exe.reify(0)
    for s in range(1, 3 * generation):
        exe.reify(s)
        if s % 1000 == 0:
            exe.reify(0)  # looked up again and again: never released
    entries = native.cache_info()["entries"] - before
    assert generation < entries <= 2 * generation
    calls = len(reifier.calls)
    assert exe.reify(0).lineno == 1 and exe.reify(3 * generation - 1).lineno == 3 * generation
    assert len(reifier.calls) == calls  # recent states are still cached
    assert exe.reify(1).lineno == 2
    assert len(reifier.calls) == calls + 1  # an old one was released, and comes back the same
    assert (kept.filename, kept.lineno, kept.colno) == ("count.dsl", 6, 2)
    assert (tb[0].filename, tb[0].lineno) == ("count.dsl", 6)  # re-reified from the raw entry
    del exe, tb, kept
    gc.collect()
    assert native.cache_info()["entries"] == before


def test_defaults_and_full_location():
    code = compile("pass", "real.py", "exec")
    exe = native.Executable("full", lambda s: native.Location(
        "f.dsl", 3, "fn", "mod.fn", 4, 1, 9, code), kind="jit")
    f = exe.reify(0)
    assert (f.filename, f.lineno, f.end_lineno, f.colno, f.end_colno) == ("f.dsl", 3, 4, 1, 9)
    assert (f.name, f.qualname, f.code, f.kind, f.state) == ("fn", "mod.fn", code, "native", 0)
    plain = native.Executable("plain", lambda s: ("p.dsl", 5)).reify(0)
    assert (plain.name, plain.qualname, plain.code, plain.colno) == ("plain", "plain", None, None)


def test_reifier_that_raises_warns_once_and_gives_a_placeholder():
    def broken(state):
        raise ValueError(f"no op {state}")

    exe = native.Executable("broken", broken, kind="dsl")
    tb1, tb2 = capture_in(exe, 1), capture_in(exe, 2)
    with pytest.warns(native.ReificationWarning, match=r"'broken' failed for state 1: .*"
                                                       r"ValueError: no op 1"):
        f = tb1[0]
    assert (f.kind, f.filename, f.name, f.lineno) == ("native", "<dsl:broken>", "broken", None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert tb2[0].filename == "<dsl:broken>"  # no second warning for this executable
        assert tb1[0].filename == "<dsl:broken>"  # cached placeholder
    assert issubclass(native.ReificationWarning, RuntimeWarning)


@pytest.mark.parametrize("result, message", [
    (42, "got int"),
    ("file.dsl", "got str"),
    (("file.dsl",), "got 1 items"),
    (("file.dsl", "seven"), "lineno must be an int or None, not str"),
    (("file.dsl", -3), "lineno must be >= 0"),
    ((b"file.dsl", 1), "filename must be a str, not bytes"),
    (("file.dsl", 1, 5), "name must be a str or None, not int"),
    (("file.dsl", 1, None, None, None, 1.5), "colno must be an int or None, not float"),
    (("file.dsl", 1, None, None, None, None, None, "code"), "code must be a code object"),
    (("file.dsl", True), "lineno must be an int or None, not bool"),
])
def test_reifier_returning_the_wrong_type(result, message):
    exe = native.Executable("wrong", lambda s: result)
    tb = capture_in(exe, 0)
    with pytest.warns(native.ReificationWarning, match=message):
        f = tb[0]
    assert (f.filename, f.lineno) == ("<python:wrong>", None)


def test_none_means_unknown_without_warning():
    exe = native.Executable("unknown", lambda s: None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = capture_in(exe, 0)[0]
    assert (f.filename, f.name, f.lineno) == ("<python:unknown>", "unknown", None)


def test_warning_as_error_raises_at_symbolization():
    exe = native.Executable("strict", lambda s: 1 / 0)
    tb = capture_in(exe, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", native.ReificationWarning)
        with pytest.raises(native.ReificationWarning, match="ZeroDivisionError"):
            tb[0]
    assert tb[0].filename == "<python:strict>"  # the placeholder was kept


def test_executable_and_reifier_deleted_while_frames_exist():
    reifier = Counting("kept.dsl")
    exe = native.Executable("temp", reifier)
    ref_exe, ref_reifier = weakref.ref(exe), weakref.ref(reifier)
    with exe.frame(4) as frame:
        del exe, reifier
        gc.collect()
        tb = callsite.capture()
        assert frame.executable is ref_exe()
    del frame
    gc.collect()
    assert ref_exe() is not None and ref_reifier() is not None  # the Traceback keeps them
    assert (tb[0].filename, tb[0].lineno) == ("kept.dsl", 5)
    single = tb[0]
    del tb
    gc.collect()
    assert ref_exe() is not None  # the Frame too
    del single
    gc.collect()
    assert ref_exe() is None and ref_reifier() is None


def test_reifier_in_a_cycle_is_collected():
    class Holder:
        pass

    holder = Holder()
    holder.exe = native.Executable("cyclic", lambda s, h=holder: ("c.dsl", s))
    ref = weakref.ref(holder.exe)
    del holder
    gc.collect()
    assert ref() is None


def test_reifier_that_symbolizes_its_own_frame_does_not_recurse():
    depth = []

    def reentrant(state):
        depth.append(state)
        inner = callsite.capture()[0:3]  # its own frame is on the stack: symbolize it
        return ("re.dsl", len([f for f in inner if f.kind == "native"]))

    exe = native.Executable("re", reentrant)
    f = capture_in(exe, 3)[0]
    assert f.filename == "re.dsl"
    assert depth == [3]


def test_constructor_errors():
    with pytest.raises(TypeError, match="name must be a str, not int"):
        native.Executable(1, lambda s: None)
    with pytest.raises(TypeError, match="reifier must be callable"):
        native.Executable("x", "not callable")
    with pytest.raises(TypeError, match="kind must be a str"):
        native.Executable("x", lambda s: None, kind=3)
    exe = native.Executable("x", lambda s: None, kind="jit")
    assert (exe.name, exe.kind) == ("x", "jit")
    assert "Executable 'x' kind='jit'" in repr(exe)
