"""Hypothesis property tests over every public Python callable of callsite (run as a script).

    python fuzz_callables.py TARGET EXAMPLES

runs one target with that many examples and prints "TARGET examples=N" (N as counted by the
target itself). test_hardening_fuzz.py runs every target in its own process, so a crash is a
failed test with the output, not a dead test run. Properties: nothing raises anything but the
documented exception types (TypeError/ValueError/OverflowError/RuntimeError/LookupError, and
ImportError for a bindings module name that does not exist), and what is returned renders
(str, repr, to_mlir) without error.
"""
from __future__ import annotations

import re
import sys
import types
import warnings

from hypothesis import HealthCheck, given, settings, strategies as st

import callsite
import callsite.mlir
import callsite.native as native
import callsite.tracking as tracking

try:
    import callsite._callsite_testing as _testing  # test builds only
except ImportError:
    _testing = types.SimpleNamespace(code_positions=lambda *a: None)

# ImportError: callsite.mlir.use("name") imports the bindings module of that name.
EXPECTED = (TypeError, ValueError, OverflowError, RuntimeError, LookupError, AttributeError,
            ImportError)
COUNT = [0]

# Text that stresses escaping: quotes, backslashes, newlines, NUL, lone surrogates, non-BMP.
nasty_text = st.text(alphabet=st.one_of(
    st.sampled_from(['"', "\\", "\n", "\r", "\t", "\0", "\ud800", "\udfff", "/", ".", "*", "(",
                     "[", "^", "$", "é", "\U0001F600", " "]),
    st.characters()), max_size=40)
ints = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.sampled_from(
    [0, 1, -1, 2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64, -2**63]))
junk = st.one_of(st.none(), st.booleans(), ints, st.floats(allow_nan=True), nasty_text,
                 st.binary(max_size=8), st.lists(nasty_text, max_size=3),
                 st.builds(object), st.just(callsite.Filter), st.just(sys.modules[__name__]))
patterns = st.one_of(nasty_text, st.builds(lambda t: re.compile(re.escape(t)), nasty_text),
                     st.sampled_from(["(", "[a-", "a{2,1}", "(?P<x>", "\\", "*", "^$", ".*"]))
rules = st.one_of(st.none(), patterns, st.lists(patterns, max_size=4), junk)
limits = st.one_of(st.none(), ints, junk)


def expect(fn, *args, **kwargs):
    """Calls fn; returns its result, or None for a documented exception type."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*args, **kwargs)
    except EXPECTED:
        return None


def render(tb):
    if tb is None:
        return
    str(tb), repr(tb), len(tb)
    expect(tb.to_mlir)
    for fr in tb:
        str(fr), repr(fr), fr.to_dict(), fr.lineno, fr.kind
        expect(fr.to_mlir)


def code_named(filename, name):
    src = "def f(capture, *a, **k):\n    return capture(*a, **k)\n"
    ns = {}
    exec(compile(src, "fuzz.py", "exec"), ns)
    f = ns["f"]
    code = f.__code__.replace(co_filename=filename, co_name=name or "f")
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=name or "f")
    return types.FunctionType(code, {})


def slow():
    return settings(deadline=None, suppress_health_check=list(HealthCheck), database=None,
                    max_examples=EXAMPLES)


EXAMPLES = 100


@given(include=rules, exclude=rules, limit=limits, defaults=junk)
def filter_construction(include, exclude, limit, defaults):
    COUNT[0] += 1
    f = expect(callsite.Filter, include, exclude, limit, default_exclusions=defaults)
    if f is not None:
        repr(f), f.include, f.exclude, f.limit, f.generation
        render(expect(callsite.capture, filter=f))


@given(ops=st.lists(st.tuples(st.sampled_from(
    ["add_include", "add_exclude", "include_file", "exclude_file", "include_dir", "exclude_dir",
     "remove", "keeps", "first_user_frame", "apply", "copy", "clear", "limit", "default"]),
    st.one_of(patterns, junk)), max_size=8), filename=nasty_text)
def filter_methods(ops, filename):
    COUNT[0] += 1
    f = callsite.Filter()
    for op, arg in ops:
        if op == "limit":
            expect(setattr, f, "limit", arg)
        elif op in ("copy", "clear", "default"):
            expect(getattr(f, op))
        elif op == "apply":
            render(expect(f.apply, callsite.capture() if isinstance(arg, str) else arg))
        elif op == "first_user_frame":
            fr = expect(f.first_user_frame, *(() if arg is None else (arg,)))
            if fr is not None:
                str(fr)
        else:
            expect(getattr(f, op), arg)
    expect(f.keeps, filename)
    fn = code_named(filename, "g")
    render(expect(fn, callsite.capture, filter=f))
    repr(f)


@given(skip=junk, limit=junk, source=st.one_of(junk, st.sampled_from(["walk", "window"])),
       filename=nasty_text, name=nasty_text, backend=st.sampled_from(["internal", "public"]))
def capture_and_render(skip, limit, source, filename, name, backend):
    COUNT[0] += 1
    expect(callsite.set_backend, backend)
    fn = code_named(filename, name)
    tb = expect(fn, callsite.capture, skip, limit, source=source)
    render(tb)
    if tb is not None:
        for i in (0, -1, len(tb), -len(tb) - 1, 2**63):
            expect(tb.__getitem__, i)
        render(tb[::-1]), render(tb[1:3])
        expect(tb.to_mlir, skip), tb.to_list(), tb.raw(), tb.as_stack_summary()
        expect(tb.format)  # linecache's ValueError for a filename with NUL, as CPython's
        expect(callsite.Traceback.from_frame, skip)
        expect(callsite.Traceback.from_traceback, limit)
        expect(callsite.Filter().apply, tb)
        hash(tb[0]) if len(tb) else None


@given(name=junk, reifier_result=st.one_of(junk, st.tuples(junk, junk), st.tuples(
    nasty_text, ints, junk, junk, ints, ints, ints)), kind=junk, state=junk,
       filename=nasty_text)
def native_frames(name, reifier_result, kind, state, filename):
    COUNT[0] += 1

    def where(s):
        return reifier_result

    exe = expect(native.Executable, name, where, kind=kind)
    if exe is None:
        exe = native.Executable("fz", where)
    fr = expect(exe.reify, state)
    if fr is not None:
        str(fr), fr.to_mlir(), fr.to_dict()
    nf = expect(native.frame, exe, state)
    if nf is not None:
        with nf:
            expect(setattr, nf, "state", state)
            render(callsite.capture())
            native.current(), native.stack()
    expect(native.NativeFrame, exe, state)
    native.cache_info()
    good = native.Executable("ok", lambda s: native.Location(filename, 1, colno=0, end_colno=3))
    with good.frame(1):
        render(callsite.capture())


@given(mode=st.one_of(st.sampled_from(["auto", "profile", "monitoring"]), junk),
       window=junk, tool_id=junk, skip=junk, limit=junk, use_filter=st.booleans())
def tracking_calls(mode, window, tool_id, skip, limit, use_filter):
    COUNT[0] += 1
    flt = callsite.Filter() if use_filter else None
    s = expect(tracking.enable, mode, window, filter=flt, tool_id=tool_id)
    try:
        def g():
            return 1
        g()
        w = expect(tracking.window, skip, limit, filter=flt)
        if w:
            [str(e.site) for e in w]
        fr = expect(tracking.last, flt)
        if fr is not None:
            str(fr)
        render(expect(callsite.capture, source="window", limit=limit))
        tracking.status(), tracking.available_modes()
        expect(tracking.refresh), expect(tracking.clear)
    finally:
        expect(tracking.disable)
        del s


@given(args=st.lists(junk, max_size=3), which=st.sampled_from(
    ["use", "bindings", "auto_locations", "loc_tracebacks", "register_traceback_file_inclusion",
     "register_traceback_file_exclusion", "cache_info", "clear_caches", "location",
     "set_backend", "code_positions"]))
def mlir_and_misc(args, which):
    COUNT[0] += 1
    mod = _testing if which == "code_positions" else (
        callsite if which == "set_backend" else callsite.mlir)
    fn = getattr(mod, which)
    r = expect(fn, *args)
    if hasattr(r, "__enter__"):
        expect(lambda: r.__enter__() and r.__exit__(None, None, None))
    callsite.set_backend("internal") if callsite.internal_backend_refusal() is None else None
    callsite.mlir.register_traceback_file_inclusion.__doc__  # module still sane


TARGETS = {f.__name__: f for f in (filter_construction, filter_methods, capture_and_render,
                                   native_frames, tracking_calls, mlir_and_misc)}


def main():
    global EXAMPLES
    target, EXAMPLES = sys.argv[1], int(sys.argv[2])
    fn = TARGETS[target]
    slow()(fn)()
    print(f"{target} examples={COUNT[0]}")


if __name__ == "__main__":
    main()
