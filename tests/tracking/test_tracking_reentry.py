"""callsite.tracking.last() while its filter's decision runs Python code: a collection the
decision's allocations start may run finalizers that record calls, resize the window or
disable tracking (which frees the window). The query holds what it reads; the oracle is a
clean run (no crash, no error) and the answer of a plain query."""
import os
import subprocess
import sys
import textwrap

import pytest

PROGRAM = textwrap.dedent("""
    import gc, callsite, callsite.tracking as tracking

    class Bomb:
        def __init__(self):
            self.me = self            # a cycle: only a collection frees it
        def __del__(self):
            ACTION()

    tracking.enable(mode="profile", window=64)
    callers = []
    for i in range(40):               # callers in distinct files: one regex run each
        ns = {}
        exec(compile("def caller(f):\\n    return f()\\n", f"<caller {i}>", "exec"), ns)
        callers.append(ns["caller"])
    def callee():
        pass
    for caller in callers:
        caller(callee)
    drop_all = callsite.Filter(exclude=[".*"], default_exclusions=False)
    gc.disable()
    for _ in range(20):
        Bomb()
    gc.set_threshold(1)
    gc.enable()
    print(tracking.last(drop_all))
    gc.set_threshold(700)
    print("done")
""")

ACTIONS = {
    "disable": "tracking.disable()",
    "resize": "tracking.enable(mode='profile', window=2)",
    "record": "[(lambda: None)() for _ in range(100)]",
}


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="from 3.12 a collection starts at the "
                    "next bytecode boundary, never inside the query's C code")
@pytest.mark.parametrize("action", sorted(ACTIONS))
def test_finalizers_during_last_filter_decisions(action):
    source = PROGRAM.replace("ACTION()", ACTIONS[action])
    env = dict(os.environ, PYTHONMALLOC="debug")  # freed memory is overwritten: a read of it shows
    r = subprocess.run([sys.executable, "-c", source], capture_output=True, text=True, env=env,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.splitlines() == ["None", "done"], r.stdout
