"""callsite.torch.traceback_of(node) after torch's own passes: export's (set-grad, autocast),
run_decompositions() and copies of a node's metadata, on a Llama-style model. A node's capture
must be there wherever its text is the one recorded with it, and agree with that text. Each
scenario in a child process."""
import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from test_torch import run  # noqa: E402

CHECK = """
    import re
    QUOTED = re.compile(r'File "(.*)", line (\\d+), in (\\S+)')
    def check(graph, at_least):
        '''Every node with a text has a capture whose frames (outermost first) hold the text's
        frames in order; returns how many nodes have a text.'''
        recorded = [n for n in graph.nodes if n.stack_trace]
        assert len(recorded) >= at_least, (len(recorded), at_least)
        for node in recorded:
            tb = ct.traceback_of(node)
            assert tb is not None, (node.name, node.stack_trace)
            frames = iter([(f.code.co_filename, f.lineno, f.code.co_name)
                           for f in reversed(tb) if f.code is not None])
            quoted = [(f, int(line), name) for f, line, name in QUOTED.findall(node.stack_trace)]
            assert quoted and all(frame in frames for frame in quoted), (node.name, quoted)
        return len(recorded)
"""


def test_export_passes_and_decompositions_keep_the_capture():
    result = run(CHECK + """
    import copy, pickle, torch, torch_models as tm, callsite.torch as ct
    model, tokens = tm.Llama(4), tm.llama_tokens()
    theirs = torch.export.export(model, (tokens,))
    assert ct.accelerate()
    program = torch.export.export(model, (tokens,))
    texts = [(n.name, n.meta.get("stack_trace")) for n in program.graph.nodes]
    assert texts == [(n.name, n.meta.get("stack_trace")) for n in theirs.graph.nodes]
    exported = check(program.graph, 100)
    decomposed = check(program.run_decompositions().graph, 100)
    print(exported, decomposed)
    # A node's metadata copied (a shallow or deep copy) carries the same capture; pickled, the
    # capture is dropped and the rest of the metadata kept.
    node = next(n for n in program.graph.nodes if n.stack_trace)
    plain = {k: v for k, v in node.meta.items() if k != "val"}  # fake tensors: no deep copy
    for meta in (dict(node.meta), copy.copy(node.meta), copy.deepcopy(plain)):
        assert meta["_callsite_traceback"] is node.meta["_callsite_traceback"]
    restored = pickle.loads(pickle.dumps({"stack_trace": node.stack_trace,
                                          "capture": node.meta["_callsite_traceback"]}))
    assert restored == {"stack_trace": node.stack_trace, "capture": None}
    """)
    print(result.stdout)


def test_capture_dropped_where_the_text_is():
    """A node whose text a pass drops or rewrites has no capture (it no longer describes it);
    a node made by copying another's metadata has the other's."""
    run(CHECK + """
    import torch.fx as fx, torch_models as tm, callsite.torch as ct
    assert ct.accelerate()
    tracer = fx.Tracer(); tracer.record_stack_traces = True
    graph = tracer.trace(tm.Transformer(1))
    check(graph, 10)
    recorded = [n for n in graph.nodes if n.stack_trace]
    copied = graph.create_node("call_function", len, (recorded[0],), {})
    copied.meta = dict(recorded[1].meta)
    assert ct.traceback_of(copied) is ct.traceback_of(recorded[1]) is not None
    recorded[2].stack_trace = None
    recorded[3].stack_trace = recorded[3].stack_trace + "\\nmore"
    assert ct.traceback_of(recorded[2]) is None and ct.traceback_of(recorded[3]) is None
    assert ct.decelerate()
    assert ct.traceback_of(recorded[1]) is not None  # the node keeps what it recorded
    """)
