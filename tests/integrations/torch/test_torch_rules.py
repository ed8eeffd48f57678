"""callsite.torch reading torch's filter rules on first use: threads recording their first
nodes while another thread imports what torch's filter imports, and that import interrupted.
Each scenario in a child process (torch.fx.experimental.symbolic_shapes not yet imported)."""
import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from test_torch import run  # noqa: E402

SLOW_FINDER = """
    import importlib.abc, sys, threading
    RULES = "torch.fx.experimental.symbolic_shapes"
    assert RULES not in sys.modules
    class Finder(importlib.abc.MetaPathFinder):
        '''Runs `hook` the first time the rules' module is looked for (then the real finders).'''
        def __init__(self, hook):
            self.hook, self.done = hook, False
        def find_spec(self, name, path, target=None):
            if name == RULES and not self.done:
                self.done = True
                self.hook()
            return None
"""


def test_threads_record_while_the_rules_are_imported():
    """A second thread records its first nodes while the first is still importing the rules'
    module: both get torch's texts."""
    run(SLOW_FINDER + """
    import torch_models as tm, callsite.torch as ct
    assert ct.accelerate()
    importing, second_done = threading.Event(), threading.Event()
    def slow():
        importing.set()
        second_done.wait(2)  # until the second thread has recorded (or waits for this import)
    sys.meta_path.insert(0, Finder(slow))
    results = {}
    def work(name):
        try:
            results[name] = tm.built_node_traces()
        except BaseException as error:
            results[name] = repr(error)
        finally:
            if name == "second":
                second_done.set()
    first = threading.Thread(target=work, args=("first",))
    first.start()
    assert importing.wait(60)
    second = threading.Thread(target=work, args=("second",))
    second.start()
    second.join(); first.join()
    assert ct.decelerate()
    theirs = tm.built_node_traces()
    assert results == {"first": theirs, "second": theirs}, results
    """)


def test_interrupted_rules_import_is_tried_again():
    """A KeyboardInterrupt during the rules' import reaches the program, and the next trace
    reads the rules and gives torch's texts."""
    run(SLOW_FINDER + """
    import torch_models as tm, callsite.torch as ct
    assert ct.accelerate()
    def interrupt():
        raise KeyboardInterrupt
    sys.meta_path.insert(0, Finder(interrupt))
    try:
        tm.built_node_traces()
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt did not reach the program")
    assert RULES not in sys.modules
    ours = tm.built_node_traces()
    assert ct.decelerate()
    assert ours == tm.built_node_traces()
    """)
