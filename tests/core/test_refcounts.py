"""tests/core/test_refcounts.py — capture owns exactly one reference per frame, frees it once, leaks nothing."""
from __future__ import annotations

import gc
import sys
import tracemalloc
import types
import weakref

import pytest
from refcount_support import check_one_reference_per_entry, stack_codes

import callsite

MILLION = 1_000_000


# --- helpers --------------------------------------------------------------------------------

class _Sentinel:
    """Weakrefable marker stored only in one code object's co_consts: it dies exactly when that
    code object is freed (code objects themselves are not weakrefable)."""


def fresh_function(template: types.FunctionType):
    """A copy of `template` running a brand-new code object that nothing else references, and a
    weakref that is cleared when that code object is freed."""
    sentinel = _Sentinel()
    code = template.__code__.replace(co_consts=template.__code__.co_consts + (sentinel,))
    fn = types.FunctionType(code, template.__globals__, template.__name__)
    ref = weakref.ref(sentinel)
    del sentinel, code
    assert ref() is not None
    return fn, ref


def _capture_here():
    return callsite.capture()


def _capture_recursive(k):
    # One frame of this code per level: the Traceback holds k references to it.
    if k > 1:
        return _capture_recursive(k - 1)
    return callsite.capture()


def at_depth(k, fn):
    if k > 1:
        return at_depth(k - 1, fn)
    return fn()


def traced_growth(loop) -> int:
    """Bytes still allocated (tracemalloc) after running loop(), start-up noise excluded."""
    loop()  # warm: free lists, caches, co_extra entries
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        loop()
        gc.collect()
        after = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    return after - before


# --- a million captures -------------------------------------------------------------------

@pytest.mark.parametrize("depth", [8, 40])  # 40: above pymalloc's 512-byte limit (libc malloc)
def test_million_captures_leave_memory_flat(callsite_backend, depth):
    def loop():
        cap = callsite.capture
        for _ in range(MILLION):
            cap()

    def run():
        return at_depth(depth, loop)

    # One probe capture at the same depth holds every code object of the measured stack.
    probe = at_depth(depth, callsite.capture)
    codes = [f.code for f in probe]
    del probe
    gc.collect()
    rc_before = [sys.getrefcount(c) for c in codes]
    blocks_before = sys.getallocatedblocks()
    growth = traced_growth(run)
    blocks_after = sys.getallocatedblocks()
    rc_after = [sys.getrefcount(c) for c in codes]
    assert rc_after == rc_before, "code object reference counts changed over 2M captures"
    # A leaked Traceback would be >= 24 bytes each: 24 MB for a million.
    assert growth < 64 * 1024, f"{growth} bytes still allocated after a million captures"
    assert blocks_after - blocks_before < 200, "allocated blocks grew over 2M captures"


def test_million_captures_with_arguments_leave_memory_flat(callsite_backend):
    def loop():
        cap = callsite.capture
        for _ in range(MILLION // 4):
            cap(1, 3)
            cap(skip=0, limit=None)

    codes = stack_codes()
    gc.collect()
    rc_before = [sys.getrefcount(c) for c in codes]
    growth = traced_growth(loop)
    assert [sys.getrefcount(c) for c in codes] == rc_before
    assert growth < 64 * 1024, f"{growth} bytes still allocated"


def _recurse_template(self_fn, k):
    if k > 1:
        return self_fn(self_fn, k - 1)
    return callsite.capture()


def unique_function(template: types.FunctionType):
    """A copy of template whose code object and name/qualname/filename strings are new objects
    referenced by nothing else (not interned, not dict keys): their reference counts move
    only through what holds them — here, callsite."""
    tag = str(id(object()))
    name, filename = "unique_" + tag, "<refcount test " + tag + ">"
    changes = {"co_name": name, "co_filename": filename}
    if sys.version_info >= (3, 11):
        changes["co_qualname"] = "Q." + name
    code = template.__code__.replace(**changes)
    return types.FunctionType(code, template.__globals__, name)


def test_symbolizing_leaves_memory_and_refcounts_flat(callsite_backend):
    fn = unique_function(_recurse_template)
    tb = fn(fn, 6)
    code = fn.__code__
    assert [f.code for f in tb[:6]] == [code] * 6
    objects = [code, code.co_name, code.co_filename]
    if sys.version_info >= (3, 11):
        objects.append(code.co_qualname)
    gc.collect()
    before = [sys.getrefcount(o) for o in objects]

    def loop():
        for _ in range(500):
            tb.frames
            tb[3]
            tb[1:7]
            tb.as_stack_summary()
            tb.format()
            repr(tb)
            hash(tb)
            tb == tb[:]
            tb.raw()
            list(tb)

    growth = traced_growth(loop)
    assert [sys.getrefcount(o) for o in objects] == before, "code/name/filename refcounts moved"
    assert growth < 64 * 1024, f"{growth} bytes still allocated"
    held = sys.getrefcount(code)
    del tb
    assert sys.getrefcount(code) == held - 6, "the Traceback did not release its 6 references"


# --- exact ownership: one reference per frame, released once ----------------------------------

def test_traceback_owns_one_reference_per_frame(callsite_backend):
    # The slice [::2] holds frames 0, 2, 4, 6 of the 7 recursive ones.
    check_one_reference_per_entry(lambda: _capture_recursive(7), [_capture_recursive.__code__],
                                  [7], slice(None, None, 2), held_in_part=[4])


def test_frame_owns_its_code(callsite_backend):
    code = _capture_recursive.__code__
    gc.collect()
    base = sys.getrefcount(code)
    frame = _capture_recursive(3)[0]  # the Traceback dies right away; the Frame stays
    assert frame.code is code
    # The Frame holds the raw entry's reference and its `code` attribute's reference.
    held = sys.getrefcount(code) - base
    assert held >= 1
    del frame
    assert sys.getrefcount(code) == base


# --- freeing: a deleted function's code dies with the last Traceback ----------------------------

def test_fresh_function_helper_detects_a_reference():
    # The sentinel technique must be able to fail: it stays alive while anything holds the code.
    fn, alive = fresh_function(_capture_here)
    keep = fn.__code__
    del fn
    assert alive() is not None
    del keep
    assert alive() is None


def test_deleted_function_code_freed_with_last_traceback(callsite_backend):
    fn, alive = fresh_function(_capture_here)
    tb = fn()
    assert tb[0].code is fn.__code__
    del fn
    assert alive() is not None, "the Traceback must keep the code object alive"
    other = tb[:]  # a second owner
    del tb
    assert alive() is not None, "a slice must keep the code object alive"
    del other
    assert alive() is None, "the code object outlived every Traceback holding it"


def test_symbolized_code_freed_with_last_traceback(callsite_backend):
    # Symbolizing stores decoded line tables in co_extra: that cache must not keep the code
    # alive (no cycle, no extra reference), and must be freed with it.
    fn, alive = fresh_function(_capture_here)
    tb = fn()
    tb.frames, tb.as_stack_summary(), tb.format(), repr(tb)
    del fn
    assert alive() is not None
    del tb
    assert alive() is None, "symbolization kept the code object alive"


def test_frames_and_slices_keep_code_alive(callsite_backend):
    fn, alive = fresh_function(_capture_here)
    tb = fn()
    del fn
    frame = tb[0]
    frames = tb.frames
    part = tb[0:1]
    raw = tb.raw()
    del tb
    assert alive() is not None
    del frame
    assert alive() is not None
    del frames
    assert alive() is not None
    del part
    assert alive() is not None
    del raw
    assert alive() is None


def test_code_of_finished_generator_freed_with_traceback(callsite_backend):
    def template():
        yield callsite.capture()

    gen_fn, alive = fresh_function(template)
    tb = next(gen_fn())  # the generator is finalized right away
    del gen_fn
    assert alive() is not None
    del tb
    gc.collect()  # a suspended generator dropped mid-iteration can sit in a cycle
    assert alive() is None


def test_code_freed_with_traceback_from_frame(callsite_backend):
    def template():
        return sys._getframe()

    fn, alive = fresh_function(template)
    tb = callsite.Traceback.from_frame(fn())
    assert tb[0].code is not None
    del fn
    gc.collect()  # frame objects are collected through the GC
    assert alive() is not None
    del tb
    gc.collect()
    assert alive() is None


def test_many_tracebacks_share_code_until_the_last(callsite_backend):
    fn, alive = fresh_function(_capture_here)
    tbs = [fn() for _ in range(100)]
    del fn
    while len(tbs) > 1:
        tbs.pop()
        assert alive() is not None
    tbs.pop()
    assert alive() is None
