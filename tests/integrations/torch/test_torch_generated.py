"""callsite.torch's texts against torch's own on generated programs: random nesting of modules
and functions, decorated forwards, recursion past StackSummary's repetition cut-off, lines
with leading tabs and non-ASCII text, a file with CRLF line ends and a BOM, lambdas and
comprehensions, and a file edited between traces. Every node's stack_trace is compared with
torch's (callsite off, then on) in every filter mode. Each program runs in a child process
(accelerate() patches torch.fx process-wide)."""
import random

import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from test_torch import run  # noqa: E402

HELPERS = '''\
import functools
import torch
from torch import nn


def deco(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


def recurse(x, n):
    if n == 0:
        return torch.relu(x)
    return recurse(x, n - 1)


def spread(x):
    y = (x +
\t     torch.sin(x))
    return y


def unicode_line(x):
    ŷ = torch.cos(x)  # ünïcode ✓ — ends in spaces   
    return ŷ


def feed(x):
    return torch.tanh(x)  # a form feed: \x0c here


def by_lambda(x):
    f = lambda t: torch.exp(t) * 0.5  # noqa: E731
    return f(x)


def by_comprehension(x):
    return sum([torch.abs(t) for t in (x, x)])
'''

EDITED = '''\
import torch


def edited(x):
    return torch.sigmoid(x)  # {tag}
'''


def program(seed: int) -> str:
    """The models' module: classes calling each other and the helpers at random."""
    rng = random.Random(seed)
    calls = ["helpers.recurse(x, {n})", "helpers.spread(x)", "helpers.unicode_line(x)",
             "helpers.feed(x)", "helpers.by_lambda(x)", "helpers.by_comprehension(x)",
             "crlf.crlf_op(x)", "edited.edited(x)", "torch.neg(x)"]
    lines = ["import torch", "from torch import nn", "import helpers, crlf, edited", ""]
    count = 6
    for i in range(count):
        children = [j for j in range(i) if rng.random() < 0.5][:2]
        lines.append(f"class M{i}(nn.Module):")
        lines.append("    def __init__(self):")
        lines.append("        super().__init__()")
        for j in children:
            lines.append(f"        self.c{j} = M{j}()")
        if not children:
            lines.append("        self.lin = nn.Linear(4, 4)")
        lines.append("")
        if rng.random() < 0.5:
            lines.append("    @helpers.deco")
        lines.append("    def forward(self, x):")
        for j in children:
            lines.append(f"        x = self.c{j}(x)")
        if not children:
            lines.append("        x = self.lin(x)")
        for _ in range(rng.randint(1, 3)):
            call = rng.choice(calls).format(n=rng.choice([1, 3, 4, 6]))
            lines.append(f"        x = x + {call}")
        lines.append("        return self.part(x)")
        lines.append("")
        lines.append("    def part(self, x):")
        lines.append(f"        return x * {i + 1}")
        lines.append("")
    # Every class traced, and the recursion past the cut-off and the edited file always.
    lines.append("class Top(nn.Module):")
    lines.append("    def __init__(self):")
    lines.append("        super().__init__()")
    lines.append(f"        self.parts = nn.ModuleList([{', '.join(f'M{i}()' for i in range(count))}])")
    lines.append("")
    lines.append("    def forward(self, x):")
    lines.append("        for part in self.parts:")
    lines.append("            x = part(x)")
    lines.append("        x = helpers.recurse(x, 6) + edited.edited(x) + crlf.crlf_op(x)")
    lines.append("        return x")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generated_programs(tmp_path, seed):
    (tmp_path / "helpers.py").write_text(HELPERS, encoding="utf-8")
    crlf = "import torch\r\n\r\n\r\ndef crlf_op(x):\r\n    return torch.square(x)  # é\r\n"
    (tmp_path / "crlf.py").write_bytes(b"\xef\xbb\xbf" + crlf.encode("utf-8"))
    (tmp_path / "edited.py").write_text(EDITED.format(tag="first"), encoding="utf-8")
    (tmp_path / f"models_{seed}.py").write_text(program(seed), encoding="utf-8")
    result = run(f"""
        import linecache, os, sys, torch, torch.fx as fx, callsite.torch as ct
        import torch_models as tm
        sys.path.insert(0, {str(tmp_path)!r})
        import models_{seed} as models
        model = models.Top()

        def traces():
            out = []
            for tracer_class, forward_only in ((fx.Tracer, False), (fx.Tracer, True),
                                               (tm.OwnFilterTracer, False)):
                out.append(tm.fx_traces(model, tracer_class, forward_only))
            return out

        def compare(tag):
            ct.decelerate()
            theirs = traces()
            assert ct.accelerate()
            ours, again = traces(), traces()
            recorded = 0
            for mode, (mine, own) in enumerate(zip(ours, theirs)):
                assert len(mine) == len(own) > 3, (tag, mode)
                for a, b in zip(mine, own):
                    assert a == b, (tag, mode, a, b)
                recorded += sum(1 for _, text in own if text)
            assert again == theirs, tag
            assert recorded, "torch recorded nothing: nothing compared"
            return theirs

        first = compare("first")
        texts = "\\n".join(t for mode in first for _, t in mode if t)
        assert "[Previous line repeated" in texts and "# first" in texts, texts
        path = os.path.join({str(tmp_path)!r}, "edited.py")
        with open(path, "w") as f:
            f.write({EDITED!r}.format(tag="second"))
        st = os.stat(path)
        os.utime(path, (st.st_atime, st.st_mtime + 10))
        linecache.checkcache(path)
        second = compare("edited")
        assert "# second" in "\\n".join(t for mode in second for _, t in mode if t)
        ct.clear_caches()
        assert compare("cleared") == second
        # A frame the native recorder leaves to the Python path (a file name that is a str
        # subclass): still torch's text.
        class Name(str):
            pass
        code = models.M0.forward.__code__
        models.M0.forward.__code__ = code.replace(co_filename=Name(code.co_filename))
        compare("str subclass")
        print("compared", len(texts))
    """, timeout=600)
    assert "compared" in result.stdout
