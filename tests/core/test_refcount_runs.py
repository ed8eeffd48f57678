"""tests/core/test_refcount_runs.py — references taken per run of equal code objects, and recycled
Traceback storage: exact counts on mixed stacks, immortal code objects left alone, pooled
blocks of every size class reused without mixing up contents."""
from __future__ import annotations

import importlib.abc
import random
import sys

import pytest
from refcount_support import check_one_reference_per_entry, stack_codes

import callsite


def _a(pattern, i):
    return _dispatch(pattern, i)


def _b(pattern, i):
    return _dispatch(pattern, i)


def _dispatch(pattern, i):
    # Calls _a or _b as the pattern says, then captures at the end: the stack interleaves
    # runs of _a, _b and _dispatch frames in the order given (innermost last in `pattern`).
    if i == len(pattern):
        return callsite.capture()
    return (_a if pattern[i] == "a" else _b)(pattern, i + 1)


@pytest.mark.parametrize("pattern", ["aaaa", "abab", "aabbbaa", "b", "abbbbbbbbbbba", "ba" * 9])
def test_counts_exact_on_interleaved_runs(callsite_backend, pattern):
    check_one_reference_per_entry(lambda: _dispatch(pattern, 0),
                                  (_a.__code__, _b.__code__, _dispatch.__code__),
                                  [pattern.count("a"), pattern.count("b"), len(pattern) + 1],
                                  slice(1, None, 3))


class _CapturingFinder(importlib.abc.MetaPathFinder):
    """Captures from find_spec, which the import system calls from importlib._bootstrap — a
    frozen module whose code objects are statically allocated and immortal on 3.12+."""

    def __init__(self):
        self.captured = None

    def find_spec(self, name, path=None, target=None):
        if name == "callsite_test_no_such_module":
            self.captured = callsite.capture()
        return None


IMMORTAL_FLOOR = 1 << 29  # 3.12/3.13 immortal refcounts are ~2**30 or more (PEP 683)


@pytest.mark.skipif(sys.version_info < (3, 12), reason="immortal objects (PEP 683) are 3.12+")
def test_immortal_code_objects_left_untouched(callsite_backend):
    finder = _CapturingFinder()
    sys.meta_path.insert(0, finder)
    try:
        with pytest.raises(ImportError):
            __import__("callsite_test_no_such_module")
    finally:
        sys.meta_path.remove(finder)
    tb = finder.captured
    frozen = [f.code for f in tb.frames if f.filename == "<frozen importlib._bootstrap>"]
    assert frozen, "expected importlib._bootstrap frames under find_spec"
    immortal = [c for c in frozen if sys.getrefcount(c) >= IMMORTAL_FLOOR]
    if sys.version_info[:2] == (3, 12):
        # 3.12 deep-freezes importlib._bootstrap: static, immortal code objects (3.13 dropped
        # deepfreeze and unmarshals them instead).
        assert immortal, "3.12's frozen importlib code should be immortal"
    for code in frozen:
        rc = sys.getrefcount(code)
        again = tb[:]  # one more reference per entry, one refcount write per run
        n = sum(1 for f in again.raw() if f[0] is code)
        assert sys.getrefcount(code) == (rc if code in immortal else rc + n)
        del again
        assert sys.getrefcount(code) == rc


def _at(depth, fn):
    if depth > 1:
        return _at(depth - 1, fn)
    return fn()


def test_recycled_storage_of_every_size_class_keeps_contents(callsite_backend):
    # Depths around every class boundary (8 entries apart, up to 256, then unpooled), kept
    # alive and freed in random order so blocks are handed back and reused across classes.
    rng = random.Random(7)
    base = len(stack_codes()) - 1
    depths = [d for d in range(1, 300) if d % 8 in (0, 1, 7)] + [255, 256, 257, 512, 513]
    alive = []
    for round_ in range(6):
        rng.shuffle(depths)
        for d in depths:
            tb, codes = _at(d, lambda: (callsite.capture(), stack_codes()))
            assert [f[0] for f in tb.raw()] == codes
            alive.append((tb, codes))
        rng.shuffle(alive)
        # Drop most of them (their storage goes back), keep a few across rounds.
        keep = alive[: len(alive) // 8]
        for tb, codes in alive:
            assert [f[0] for f in tb.raw()] == codes, f"a Traceback changed in round {round_}"
        alive = keep
    assert base >= 0


def test_recycled_storage_is_not_visible_through_hash_or_equality(callsite_backend):
    def site():
        return callsite.capture()

    def make(depth):
        return _at(depth, site)  # one call site: equal depths give equal stacks

    seen = []
    for depth in (10, 12, 10):  # the loop keeps every frame's offset the same each time
        tb = make(depth)
        seen.append((hash(tb), tb.raw()))
        del tb  # its block goes back to the pool, cached hash and all
    (h10, raw10), (h12, raw12), (h10_again, raw10_again) = seen
    assert raw10_again == raw10 and h10_again == h10
    assert raw12 != raw10 and len(raw12) == len(raw10) + 2
    assert h12 != h10, "a recycled block kept the hash of its previous Traceback"
