"""callsite.torch.frames(filter, boundary): under the scope every node fx, make_fx and non-strict
export record gets the frames a callsite.Filter keeps, in torch's text format; outside it,
torch's own texts. Each scenario in a child process (the scope accelerates torch.fx)."""
import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from test_torch import run  # noqa: E402

# Shared by the scenarios: the oracle of a text (CPython's own traceback.StackSummary of the
# frames of the node's capture, outermost first, each line read by linecache) and a Filter of
# the user's frames (torch's own files dropped).
PRELUDE = """
import os, traceback, torch, callsite, callsite.torch as ct

def oracle(tb):
    summary = traceback.StackSummary.from_list(
        [traceback.FrameSummary(f.filename, f.lineno, f.name) for f in reversed(list(tb))])
    return "".join(summary.format()).strip()

user = callsite.Filter()
user.exclude_dir(os.path.dirname(torch.__file__))
user.add_exclude(r"^<string>$")  # code torch generates and runs (export's wrappers)
"""


def test_loss_helper_make_fx_names_the_helper(tmp_path):
    """make_fx of a training step that calls a loss helper: torch's forward-only rule gives
    no call_function node a text naming compute_loss; under frames(user) each node of the
    helper names it innermost, the model's nodes name the step, and every text is CPython's
    format of the node's capture. After the scope, torch's texts again."""
    result = run(PRELUDE + """
import torch.nn as nn, torch.nn.functional as F
from torch.fx.experimental.proxy_tensor import make_fx

net = nn.Linear(4, 3)

def compute_loss(out, target):
    return F.nll_loss(F.log_softmax(out, dim=-1), target) * 0.5

def step(x, target):
    return compute_loss(net(x), target)

x, target = torch.randn(2, 4), torch.tensor([0, 2])

def calls():
    graph = make_fx(step, record_stack_traces=True)(x, target)
    return [n for n in graph.graph.nodes if n.op == "call_function"]

theirs = [n.meta.get("stack_trace") for n in calls()]
assert sum("compute_loss" in (t or "") for t in theirs) == 0, theirs
with ct.frames(user) as chosen:
    assert chosen is user
    nodes = calls()
# nn.Linear's ops (t, addmm) come from step; log_softmax, nll_loss (and its getitems), mul
# from compute_loss.
model = [n for n in nodes if str(n.target) in ("aten.t.default", "aten.addmm.default")]
helper = [n for n in nodes if n not in model]
assert len(model) == 2 and any("nll_loss" in str(n.target) for n in helper), nodes
for node in nodes:
    text, tb = node.meta["stack_trace"], ct.traceback_of(node)
    assert text == oracle(tb), (text, oracle(tb))
    assert all(f.filename == __file__ for f in tb), text
    innermost = text.splitlines()[-2]
    assert innermost.endswith("in compute_loss" if node in helper else "in step"), (node, text)
assert [n.meta.get("stack_trace") for n in calls()] == theirs
print(len(helper), len(nodes))
""", script=tmp_path / "loss_step.py")
    helper, total = map(int, result.stdout.split())
    assert 0 < helper < total


def test_fx_and_export_under_frames_and_unchanged_outside(tmp_path):
    """fx.Tracer (full mode) and non-strict export under frames(user): every recorded text is
    CPython's format of the node's capture and holds only the user's frames (this file, from
    the outermost caller down); the same graphs traced before and after the scope have torch's
    own texts, byte for byte."""
    run(PRELUDE + """
import torch.fx as fx, torch.nn as nn

def helper(h):
    return torch.relu(h) * 2

class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
    def forward(self, x):
        return helper(self.lin(x)) + 1

model, x = Model(), torch.randn(2, 4)

def fx_nodes():
    tracer = fx.Tracer(); tracer.record_stack_traces = True
    return list(tracer.trace(model).nodes)

def export_nodes():
    return list(torch.export.export(model, (x,), strict=False).graph.nodes)

def texts(nodes):
    return [(n.name, n.meta.get("stack_trace")) for n in nodes]

theirs = {"fx": texts(fx_nodes()), "export": texts(export_nodes())}
for name, trace in (("fx", fx_nodes), ("export", export_nodes)):
    with ct.frames(user):
        nodes = trace()
    recorded = [n for n in nodes if n.meta.get("stack_trace")]
    assert len(recorded) >= 3, (name, texts(nodes))
    for node in recorded:
        tb = ct.traceback_of(node)
        assert node.meta["stack_trace"] == oracle(tb), name
        assert tb and all(f.filename == __file__ for f in tb), (name, node.meta["stack_trace"])
        assert tb[len(tb) - 1].name == "<module>", name
    assert any("in helper" in n.meta["stack_trace"] for n in recorded), name
    assert texts(trace()) == theirs[name], name
""", script=tmp_path / "model_and_helper.py")


def test_boundary_and_limit(tmp_path):
    """frames(filter, boundary=kernel): every text ends at the kernel's frame (its outermost
    frame), whatever is below it; the Filter's limit counts kept frames."""
    run(PRELUDE + """
import torch.fx as fx

def kernel(x):
    return torch.relu(x) + 1

def framework(depth, x):
    return kernel(x) if depth == 0 else framework(depth - 1, x)

def trace():
    tracer = fx.Tracer(); tracer.record_stack_traces = True
    return [n for n in tracer.trace(lambda x: framework(3, x)).nodes if n.op == "call_function"]

with ct.frames(user, boundary=kernel):
    nodes = trace()
for node in nodes:
    tb = ct.traceback_of(node)
    assert [f.name for f in tb] == ["kernel"], list(tb)
    assert node.meta["stack_trace"] == oracle(tb)
limited = callsite.Filter(limit=2)
limited.exclude_dir(os.path.dirname(torch.__file__))
with ct.frames(limited):
    nodes = trace()
assert all([f.name for f in ct.traceback_of(n)] == ["kernel", "framework"] for n in nodes)
""", script=tmp_path / "kernel.py")


def test_nested_scopes_and_threads(tmp_path):
    """The innermost scope wins and the outer one is back after it; a scope is its thread's
    only: a thread tracing while another thread is in a scope gets torch's texts, and a scope
    opened in a thread applies there alone."""
    run(PRELUDE + """
import threading, torch.fx as fx

def forward(x):
    return torch.relu(x) + 1

def trace():
    tracer = fx.Tracer(); tracer.record_stack_traces = True
    return [n.meta.get("stack_trace") for n in tracer.trace(forward).nodes
            if n.op == "call_function"]

theirs = trace()
inner = callsite.Filter(limit=1)
inner.exclude_dir(os.path.dirname(torch.__file__))

def innermost_names(texts):
    return [t.splitlines()[-2].rsplit(" in ", 1)[1] for t in texts]

results = {}
with ct.frames(user):
    outer = trace()
    with ct.frames(inner):
        results["inner"] = trace()
    results["outer again"] = trace()
    thread = threading.Thread(target=lambda: results.setdefault("thread", trace()))
    thread.start(); thread.join()
assert all(len(t.splitlines()) == 2 for t in results["inner"]), results["inner"]
assert innermost_names(results["inner"]) == ["forward", "forward"]
# The same frames but the outermost one's line (the <module> line tracing).
assert [t.splitlines()[2:] for t in results["outer again"]] == [t.splitlines()[2:] for t in outer]
assert all(len(t.splitlines()) > 2 for t in outer)
assert results["thread"] == theirs

def in_thread():
    with ct.frames(inner):
        results["scoped thread"] = trace()
thread = threading.Thread(target=in_thread)
thread.start(); thread.join()
assert results["scoped thread"] == results["inner"] or \\
    all(len(t.splitlines()) == 2 for t in results["scoped thread"])
assert trace() == theirs
""", script=tmp_path / "nested.py")


LLAMA = """
import transformers
from transformers import LlamaConfig, LlamaForCausalLM

# A small configuration, built here: no weights are downloaded.
config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                     num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=32,
                     use_cache=False)
torch.manual_seed(0)
model = LlamaForCausalLM(config).eval()
ids = torch.randint(0, 64, (1, 6))
user.limit = None  # the model's frames and the whole script's, however deep

def export_nodes():
    return list(torch.export.export(model, (ids,), strict=False).graph.nodes)
"""


def test_llama_export_every_node_found(tmp_path):
    """export(strict=False) of a small LlamaForCausalLM: callsite's texts are torch's, and
    traceback_of finds a capture for every node with a text, export's inserted
    _assert_tensor_metadata nodes (which copy the text alone) included; each capture has the
    frame the text ends with."""
    pytest.importorskip("transformers", reason="transformers is not installed in this venv")
    result = run(PRELUDE + LLAMA + """
theirs = [(n.name, n.meta.get("stack_trace")) for n in export_nodes()]
assert ct.accelerate()
nodes = export_nodes()
assert [(n.name, n.meta.get("stack_trace")) for n in nodes] == theirs
recorded = [n for n in nodes if n.meta.get("stack_trace")]
copied = [n for n in recorded if "_assert_tensor_metadata" in str(n.target)]
assert copied and all("_callsite_traceback" not in n.meta for n in copied)
for node in recorded:
    tb = ct.traceback_of(node)
    assert tb is not None, node.name
    last = node.meta["stack_trace"].splitlines()[-2].strip()
    assert any(f'File "{f.filename}", line {f.lineno}, in {f.name}' == last for f in tb), node
print(len(recorded), len(copied))
""", script=tmp_path / "llama_export.py")
    total, copied = map(int, result.stdout.split())
    assert total > copied > 0


def test_llama_under_frames_every_node_has_the_users_frames(tmp_path):
    """A small LlamaForCausalLM exported (strict=False) under frames(user): every
    call_function node names the model's code (transformers' files) and the user's script, as
    CPython formats the node's capture. (make_fx of the model stops at its data-dependent
    control flow in torch itself; make_fx is the loss-helper test's.)"""
    pytest.importorskip("transformers", reason="transformers is not installed in this venv")
    run(PRELUDE + LLAMA + """
modeling = os.path.dirname(transformers.__file__)
for trace in (export_nodes,):
    with ct.frames(user):
        calls = [n for n in trace() if n.op == "call_function"]
    assert len(calls) > 20, (trace, len(calls))
    for node in calls:
        text, tb = node.meta.get("stack_trace"), ct.traceback_of(node)
        assert text and text == oracle(tb), (trace, node.name)
        assert f'File "{__file__}"' in text, (trace, node.name, text)
    assert all(any(f.filename.startswith(modeling) for f in ct.traceback_of(n)) for n in calls
               if "_assert_tensor_metadata" not in str(n.target)), trace
""", script=tmp_path / "llama_frames.py")


def test_bad_arguments_name_themselves():
    run("""
import callsite.torch as ct
for kwargs, word in (({"filter": "user"}, "filter must be a callsite.Filter"),
                     ({"boundary": 3}, "boundary")):
    try:
        with ct.frames(**kwargs):
            pass
    except TypeError as error:
        assert word in str(error) and "callsite.torch.frames()" in str(error), str(error)
    else:
        raise AssertionError(kwargs)
""")
