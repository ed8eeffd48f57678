"""Python code that runs while callsite's C++ is in the middle of a query — a native frame's
reifier, or the finalizers of a collection the query's own allocations start — and changes
what the query was reading. Each query holds what it uses; the oracle is a clean run (freed
memory is overwritten) and the answer a plain query gives."""
import os
import subprocess
import sys
import textwrap

import pytest

COLLECTION_INSIDE_C = pytest.mark.skipif(
    sys.version_info >= (3, 12),
    reason="from 3.12 a collection starts at the next bytecode boundary, never inside C code")


def run_clean(source):
    env = dict(os.environ, PYTHONMALLOC="debug")  # freed memory is overwritten: a read shows
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.splitlines()


@COLLECTION_INSIDE_C
def test_filter_keeps_a_function_whose_code_is_replaced_while_deciding():
    """The decision records itself in the code object's cache after the rules ran: a build
    with ASan reports the write if the code object is not held across."""
    out = run_clean("""
        import gc, callsite

        import types
        module = compile("def victim():\\n    pass\\n", "<victim file>", "exec")
        template = next(c for c in module.co_consts if isinstance(c, types.CodeType))
        # A fresh code object whose one reference is the function's.
        victim = types.FunctionType(template.replace(co_name="victim"), {})
        del module, template
        def other():
            pass

        class Bomb:
            def __init__(self):
                self.me = self
            def __del__(self):
                victim.__code__ = other.__code__   # the old code's last reference goes
                bytearray(1 << 16)                 # reuse what it freed

        flt = callsite.Filter(exclude=["victim file"], default_exclusions=False)
        keeps = flt.keeps                          # bound before: the call itself allocates nothing
        gc.disable()
        for _ in range(20):
            Bomb()
        gc.set_threshold(1)
        gc.enable()
        print(keeps(victim))
        gc.set_threshold(700)
        print(victim.__code__ is other.__code__)
    """)
    assert out == ["False", "True"]


CHAIN_CLOSED_BY_A_REIFIER = """
    import callsite
    from callsite import native

    def k_outer(): pass
    def k_inner(): pass

    def bounded(kernel):
        with callsite.boundary(kernel):
            yield

    outer, inner = bounded(k_outer), bounded(k_inner)
    next(outer)
    next(inner)

    def reify(state):
        # Closing the outer boundary builds a new chain: the context drops the one the walk
        # in progress stops at.
        outer.close()
        return native.Location("<closed by a reifier>", 1)

    exe = native.Executable("closer", reify)
    drop_all = callsite.Filter(exclude=[".*"], default_exclusions=False)

    def deep(n):
        if n:
            return deep(n - 1)
        with exe.frame(7):
            return drop_all.first_user_frame()   # scans the native frame, then walks further

    print(deep(40))
    print(k_inner is not None)
"""


def test_a_reifier_closing_a_boundary_while_a_walk_stops_at_it():
    assert run_clean(CHAIN_CLOSED_BY_A_REIFIER) == ["None", "True"]


def test_reifier_that_pops_and_frees_a_native_frame_below_it_during_a_limited_capture():
    """capture(filter=, limit=) scans growing prefixes, deciding on each entry; deciding on a
    native frame runs its reifier, which here pops the native frame below it and drops the last
    references to its executable. The entries still to be decided stay valid."""
    out = run_clean("""
        import gc, callsite
        from callsite import native

        def outer_reify(state):
            return native.Location("outer.dsl", state + 1)

        held = {}
        def inner_reify(state):
            frame = held.pop("outer", None)
            if frame is not None:
                try:
                    frame.pop()                  # out of order: unlinked, and it says so
                except RuntimeError:
                    pass
                del frame
                held.pop("exe", None)            # the executable's last references
                gc.collect()
                bytearray(1 << 16)               # reuse what was freed
            return native.Location("inner.dsl", state + 1)

        held["exe"] = native.Executable("outer", outer_reify)
        held["outer"] = native.NativeFrame(held["exe"], 4)
        held["outer"].push()
        inner = native.Executable("inner", inner_reify)
        with inner.frame(6):
            tb = callsite.capture(filter=callsite.Filter(default_exclusions=False), limit=3)
        print([f.filename for f in tb])
    """)
    # The stack as walked: the outer frame was still on it when the capture began.
    assert out[-1] == "['inner.dsl', 'outer.dsl', '<string>']", out
