"""callsite's per-code-object cache read from co_extra directly (layouts/code_extra.h): the
direct read agrees with PyUnstable_Code_GetExtra on every slot of every code object, it is on
where the self-check allows it, and the public function gives the same results when it is off."""
import importlib
import sysconfig

import pytest

import callsite
from callsite import _callsite
from code_objects import all_code_objects


FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))


@pytest.fixture
def testing():
    return pytest.importorskip(
        "callsite._callsite_testing", reason="a build without CALLSITE_TESTING=ON has no test hooks")


def test_direct_read_is_on_where_the_self_check_allows_it():
    refusal = _callsite.code_extra_refusal()
    if callsite.layout_name == "none":
        assert refusal == "this build compiles no internal layout"
    elif FREE_THREADED:
        assert refusal == "a free-threaded build replaces co_extra under a lock"
    else:
        assert refusal is None
    report = callsite.doctor()["backend"]["code_extra"]
    assert report == ("read directly" if refusal is None
                      else f"PyUnstable_Code_GetExtra ({refusal})")


def test_direct_read_agrees_with_the_public_function_on_every_code_object(testing):
    # Fill callsite's slot on many code objects: the filter decides on every frame captured.
    for name in ("json", "email.parser", "argparse", "textwrap"):
        importlib.import_module(name)
    filt = callsite.Filter(exclude=[r"argparse"], limit=None)
    import argparse
    import textwrap

    def deep(n):
        if n == 0:
            return filt.apply(callsite.capture(limit=None))
        return deep(n - 1)

    deep(30)
    textwrap.fill("word " * 50, width=20)
    argparse.ArgumentParser(prog="x").format_help()
    callsite.capture(limit=None).format()
    filled = checked = 0
    for code in all_code_objects():
        reads = testing.code_extra_reads(code, 8)
        assert all(direct == public for direct, public in reads), (code, reads)
        filled += any(public for _, public in reads)
        checked += 1
    assert checked > 1000 and filled > 10, (checked, filled)


def test_the_public_function_gives_the_same_decisions():
    filt = callsite.Filter(exclude=[r"test_code_extra"], limit=None)

    def stacks():
        def inner(n):
            if n == 0:
                return ([(f.filename, f.lineno, f.name) for f in filt.apply(callsite.capture(limit=None))],
                        [(f.filename, f.lineno) for f in callsite.capture(limit=None)])
            return inner(n - 1)
        return [inner(n) for n in range(12)]

    before = _callsite.code_extra_refusal() is None
    results = []
    try:
        for direct_read in (before, False):  # the same call line for both
            assert _callsite._use_code_extra_direct(direct_read) is direct_read
            results.append(stacks())
    finally:
        _callsite._use_code_extra_direct(before)
    direct, public = results
    assert direct == public
    assert all(not any("test_code_extra" in f for f, _, _ in kept) for kept, _ in direct)


def test_switching_on_is_refused_where_the_self_check_refused():
    refusal = _callsite.code_extra_refusal()
    assert _callsite._use_code_extra_direct(True) is (refusal is None)
    assert _callsite._use_code_extra_direct(refusal is None) is (refusal is None)
