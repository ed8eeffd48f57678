"""Shared helpers of the reference-count tests (tests/core/test_refcounts.py and
test_refcount_runs.py): the caller's stack as CPython sees it, and the exact-ownership check of
a Traceback's code objects."""
from __future__ import annotations

import gc
import sys
from typing import Callable, Sequence


def stack_codes() -> list:
    """The code objects of the caller's stack, innermost first (sys._getframe: the oracle)."""
    f = sys._getframe(1)
    out = []
    while f is not None:
        out.append(f.f_code)
        f = f.f_back
    return out


def entries_holding(tb, codes: Sequence) -> list[int]:
    """How many of tb's raw entries hold each of `codes`."""
    return [sum(1 for entry in tb.raw() if entry[0] is code) for code in codes]


def check_one_reference_per_entry(capture: Callable, codes: Sequence, held: list[int],
                                  part: slice, held_in_part: list[int] | None = None) -> None:
    """capture() returns a Traceback whose raw entries hold codes[i] held[i] times. Checks with
    sys.getrefcount that it and its slice tb[part] (held_in_part[i] times; counted from the
    slice's entries when not given) take exactly one reference per entry, and that deleting
    the Traceback, then the slice, gives each back."""
    def counts(*extra: list[int]) -> list[int]:
        return [sum(n) for n in zip(base, *extra)]

    gc.collect()
    base = [sys.getrefcount(c) for c in codes]
    tb = capture()
    assert entries_holding(tb, codes) == held
    assert [sys.getrefcount(c) for c in codes] == counts(held)
    sliced = tb[part]
    in_part = entries_holding(sliced, codes)
    if held_in_part is not None:
        assert in_part == held_in_part
    assert [sys.getrefcount(c) for c in codes] == counts(held, in_part)
    del tb
    assert [sys.getrefcount(c) for c in codes] == counts(in_part)
    del sliced
    assert [sys.getrefcount(c) for c in codes] == base
