"""Python code that runs while callsite's C++ is in the middle of a query: a collection that
the query's own allocations start may run finalizers that change what the query was reading.
Each query holds what it uses; the oracle is a clean run and the answer a plain query gives."""
import os
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12),
    reason="from 3.12 a collection starts at the next bytecode boundary, never inside C code")


def run_clean(source):
    env = dict(os.environ, PYTHONMALLOC="debug")  # freed memory is overwritten: a read shows
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout.splitlines()


def test_filter_keeps_a_function_whose_code_is_replaced_while_deciding():
    out = run_clean("""
        import gc, callsite

        ns = {}
        exec(compile("def victim():\\n    pass\\n", "<victim file>", "exec"), ns)
        victim = ns.pop("victim")
        def other():
            pass

        class Bomb:
            def __init__(self):
                self.me = self
            def __del__(self):
                victim.__code__ = other.__code__   # the old code's last reference goes

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
