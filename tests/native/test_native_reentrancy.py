"""Reifiers (and the warning hooks they trigger) may call any public function: push and pop
frames, set states, reify other states until the cache turns over, collect garbage, drop the
last reference to an executable, or wait for another thread that does so. Every path that runs a
reifier (Executable.reify, a capture's symbolization, an exception's traceback entry, the build
of a visible executable's code) must give the right location and never touch memory it no
longer holds. Also run under ASan+UBSan (scripts/test_sanitized_module.sh)."""
from __future__ import annotations

import gc
import sys
import threading
import traceback
import warnings
import weakref

import pytest

import callsite
from callsite import native

GENERATION = native.cache_info()["generation"]
CHURN = 2 * GENERATION + 10  # enough distinct states to turn an executable's cache over twice
VISIBLE = sys.version_info[:2] in ((3, 12), (3, 13), (3, 14), (3, 15)) and \
    native.visible_frames_available()
visible_only = pytest.mark.skipif(not VISIBLE, reason="no visible-frame implementation here")

other = native.Executable("other", lambda s: native.Location("other.dsl", s + 1), kind="dsl")


def churn(exe, first):
    """Reifies CHURN states of `exe` from `first` on: its cache turns over twice."""
    for state in range(first, first + CHURN):
        exe.reify(state)


def push_pop():
    with other.frame(3) as f:
        f.state = 4
        assert native.stack()[0] == ("other", "dsl", 4)
    frame = other.frame(5)
    frame.push()
    frame.pop()


ACTIONS = {
    "push_pop": lambda ctx: push_pop(),
    "set_state": lambda ctx: native.current() and setattr(native.current(), "state", 10**6),
    "reify_other_states": lambda ctx: churn(ctx["exe"], 10**6),
    "reify_another_executable": lambda ctx: churn(other, 10**6),
    "gc_collect": lambda ctx: gc.collect(),
    "drop_references": lambda ctx: ctx["refs"].clear(),
    "capture": lambda ctx: [f.lineno for f in callsite.capture()],
    "thread_reifies": lambda ctx: run_in_thread(lambda: churn(ctx["exe"], 2 * 10**6)),
}


def run_in_thread(fn):
    t = threading.Thread(target=fn)
    t.start()
    t.join()


def make(action, *, trigger, visible=False, states=None, fail=False):
    """An executable whose reifier runs `action` once, when reifying state `trigger`, and
    locates state s at line s + 1 (or raises for every state when `fail`)."""
    ctx: dict = {"refs": [], "ran": 0}

    def reifier(state):
        if state == trigger and not ctx["ran"]:
            ctx["ran"] += 1
            ACTIONS[action](ctx)
        if fail:
            raise LookupError(f"no location for {state}")
        return native.Location("re.dsl", state + 1)

    exe = native.Executable(f"re_{action}", reifier, kind="dsl", visible=visible, states=states)
    ctx["exe"] = weakref.proxy(exe)  # the reifier itself keeps no strong reference
    ctx["refs"].append(exe)
    return exe, ctx


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_executable_reify(action):
    exe, ctx = make(action, trigger=7)
    frame = exe.reify(7)
    assert (frame.filename, frame.lineno) == ("re.dsl", 8)
    assert ctx["ran"] == 1
    assert exe.reify(7).lineno == 8


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_capture_symbolization(action):
    exe, ctx = make(action, trigger=5)
    with exe.frame(5):
        tb = callsite.capture(limit=2)
    del exe  # the Traceback holds the executable; drop_references drops the rest
    assert (tb[0].name, tb[0].lineno) == ("re_" + action, 6)
    assert "re.dsl" in "".join(tb.format())
    assert ctx["ran"] == 1


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_exception_traceback_entry(action):
    exe, ctx = make(action, trigger=2)

    def fail():
        raise KeyError("boom")

    wrapped = native.frame(exe, 2)(fail)
    del exe
    with pytest.raises(KeyError) as info:
        wrapped()
    entries = [(e.filename, e.lineno) for e in traceback.extract_tb(info.value.__traceback__)]
    assert ("re.dsl", 3) in entries
    assert ctx["ran"] == 1


@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_failing_reifier_with_a_showwarning_hook(action):
    """The reifier raises; the ReificationWarning's hook runs the action."""
    exe, ctx = make("push_pop", trigger=-1, fail=True)  # the reifier itself does nothing
    hook_ctx = {"exe": weakref.proxy(exe), "refs": ctx["refs"]}
    seen = []

    def showwarning(message, category, filename, lineno, file=None, line=None):
        seen.append(category)
        ACTIONS[action](hook_ctx)

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = showwarning
        frame = exe.reify(3)
    assert seen == [native.ReificationWarning]
    assert (frame.filename, frame.lineno) == ("<dsl:re_push_pop>", None)
    assert exe.reify(3).lineno is None


@visible_only
@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_visible_code_build(action):
    """The first call of the decorator builds the code, running the reifier for every state;
    the action runs halfway. Every state still reads its own line."""
    states = 600
    exe, ctx = make(action, trigger=states // 2, visible=True, states=states)

    def callback():
        frame, me = sys._getframe(1), native.current()
        lines = []
        for state in range(states):
            me.state = state
            lines.append(frame.f_lineno)
        return lines

    wrapped = native.frame(exe, 0)(callback)
    del exe  # the wrapper holds the executable; drop_references drops the rest
    lines = wrapped()
    assert lines == [s + 1 for s in range(states)]
    assert ctx["ran"] == 1


@visible_only
def test_visible_build_when_the_reifier_drops_the_only_wrapper():
    """The decorated function is referenced only from a list the reifier clears while the
    code is built: the call in progress keeps it (and the executable) alive."""
    holder = []

    def reifier(state):
        if state == 3:
            holder.clear()
            gc.collect()
        return native.Location("drop.dsl", state + 10)

    exe = native.Executable("drop", reifier, visible=True, states=8)
    holder.append(native.frame(exe, 5)(lambda: sys._getframe(1).f_lineno))
    ref = weakref.ref(exe)
    del exe
    assert holder[0]() == 15
    assert not holder
    gc.collect()
    assert ref() is None


def test_reifier_that_clears_its_own_executable_reference():
    """The reifier is a bound method whose only reference is the executable's: gc clears the
    executable (a cycle) from inside the reifier."""
    class Where:
        def __call__(self, state):
            return self.locate(state)

        def locate(self, state):
            self.exe = None
            gc.collect()
            return native.Location("self.dsl", state + 1)

    where = Where()
    exe = native.Executable("self", where.locate)
    where.exe = exe
    del where
    assert exe.reify(4).lineno == 5


def test_released_entries_whose_finalizers_reify_do_not_free_the_entry_returned():
    """Cached entries released when the cache turns over hold code objects whose weakref
    callbacks turn the cache over again: the entry reify() is returning stays valid."""
    codes = {}
    fired = []

    def callback(_ref):
        fired.append(True)
        churn(exe, 10**7 + len(fired) * CHURN)

    def reifier(state):
        code = None
        if state < 4:
            code = compile(f"x{state}", "w.py", "eval")
            codes[state] = weakref.ref(code, callback)
        return native.Location("w.dsl", state + 1, code=code)

    exe = native.Executable("weak", reifier)
    for state in range(2 * GENERATION):
        exe.reify(state)
    # The next new state turns the cache over: states 0..3 (and their code objects) go.
    for state in range(2 * GENERATION, 2 * GENERATION + 3):
        frame = exe.reify(state)
        assert (frame.filename, frame.lineno) == ("w.dsl", state + 1)
    exe.reify(0)  # later calls release what the earlier ones gave up
    assert fired


def test_str_subclass_results_are_stored_as_str():
    """A reifier returning str subclasses with hooks: the cache keeps plain str copies, so
    comparing or releasing them runs none of the hooks."""
    calls = []

    class Noisy(str):
        def __eq__(self, other):
            calls.append("eq")
            return str.__eq__(self, other)

        __hash__ = str.__hash__

        def __del__(self):
            calls.append("del")

    exe = native.Executable("noisy", lambda s: (Noisy("n.dsl"), s + 1, Noisy("fn")))
    frame = exe.reify(2)
    assert type(frame.filename) is str and type(frame.name) is str
    assert (frame.filename, frame.lineno, frame.name) == ("n.dsl", 3, "fn")
    assert "eq" not in calls


@pytest.mark.parametrize("backend", ["internal", "public"])
def test_captures_from_gc_callbacks_while_frames_are_parked(backend):
    """A frame pushed from a generator is parked, so every capture splices a list of the
    thread's frames; collections (run by the capture's own allocations, threshold 1) capture
    again from a gc callback, rebuilding that list while the outer capture uses it."""
    exe = native.Executable("parked", lambda s: native.Location("parked.dsl", s + 1))
    nested = []

    def on_gc(phase, info):
        if phase == "start" and len(nested) < 2000:
            nested.append([f.name for f in callsite.capture(limit=6)])

    def gen():
        with exe.frame(3):
            yield [f.name for f in callsite.capture(limit=6)]
            yield [f.name for f in callsite.capture(limit=6)]

    before, threshold = callsite.get_backend(), gc.get_threshold()
    callsite.set_backend(backend)
    gc.callbacks.append(on_gc)
    gc.set_threshold(1)
    try:
        seen = []
        for _ in range(100):
            g = gen()
            seen.extend(g)
    finally:
        gc.set_threshold(*threshold)
        gc.callbacks.remove(on_gc)
        callsite.set_backend(before)
    for names in seen:
        assert names[:2] == ["parked", "gen"], names
    assert nested and all(names.count("parked") <= 1 for names in nested)
