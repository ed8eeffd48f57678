"""Models with the shapes real ones have, and the tracings whose stack traces are compared
(used by test_torch.py in child processes)."""
import threading

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, d, heads=2):
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.heads = heads

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = F.softmax(q @ k.transpose(-2, -1) / 4.0, dim=-1)
        return self.out(weights @ v)


def gated(h, gate):
    if gate:
        return F.gelu(h) * torch.sigmoid(h)
    return scaled(h)


def scaled(h):
    return h * 0.5


class Block(nn.Module):
    def __init__(self, d, gate):
        super().__init__()
        self.attn = Attention(d)
        self.norm1 = nn.LayerNorm(d)
        self.norm2 = nn.LayerNorm(d)
        self.up = nn.Linear(d, 2 * d)
        self.down = nn.Linear(2 * d, d)
        self.gate = gate

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.down(gated(self.up(self.norm2(x)), self.gate))


class Transformer(nn.Module):
    def __init__(self, layers=4, d=16):
        super().__init__()
        self.blocks = nn.ModuleList(Block(d, i % 2 == 0) for i in range(layers))
        self.conv = nn.Conv1d(d, d, 3, padding=1)
        self.shared = nn.Linear(d, d)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        x = self.conv(x.transpose(1, 2)).transpose(1, 2)
        x = self.shared(x) + self.shared(torch.relu(x))  # one module called from two places
        return F.log_softmax(x, dim=-1)


class ConvNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.c2 = nn.Conv2d(8, 8, 3, stride=2)

    def forward(self, x):
        x = F.relu(self.bn(self.c1(x)))
        x = F.max_pool2d(self.c2(x), 2)
        return torch.flatten(x, 1).mean(1)


class OwnFilterTracer(fx.Tracer):
    """Keeps the two innermost frames whose file is not torch's."""

    def _filter_traceback_frames(self, summary):
        import traceback
        kept = [f for f in summary if "/torch/" not in f.filename][-2:]
        return traceback.StackSummary.from_list(kept)


def anchored(x):
    return torch.tanh(x) + 1


class AnchorModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x):
        return anchored(self.lin(x))


def fx_graph(model, tracer_class=fx.Tracer, forward_only=False):
    tracer = tracer_class()
    tracer.record_stack_traces = True
    tracer._record_forward_stack_traces_only = forward_only
    return tracer.trace(model)


def fx_traces(model, tracer_class=fx.Tracer, forward_only=False):
    graph = fx_graph(model, tracer_class, forward_only)
    return [(node.name, node.stack_trace) for node in graph.nodes]


def make_fx_traces(model, x):
    from torch.fx.experimental.proxy_tensor import make_fx
    gm = make_fx(model, record_stack_traces=True)(x)
    return [(node.name, node.stack_trace) for node in gm.graph.nodes]


def scenarios():
    """name -> a function returning [(node name, stack_trace)] (models built once, so both
    paths trace the very same objects)."""
    from torch.fx.proxy import _register_stack_trace_anchor
    _register_stack_trace_anchor(anchored)
    transformer, conv, anchor = Transformer(), ConvNet(), AnchorModel()
    return {
        "transformer": lambda: fx_traces(transformer),
        "transformer_forward_only": lambda: fx_traces(transformer, forward_only=True),
        "conv": lambda: fx_traces(conv),
        "own_filter": lambda: fx_traces(transformer, OwnFilterTracer),
        "anchor_forward_only": lambda: fx_traces(anchor, forward_only=True),
        "make_fx": lambda: make_fx_traces(Transformer(2), torch.randn(2, 5, 16)),
        "make_fx_conv": lambda: make_fx_traces(conv, torch.randn(2, 3, 8, 8)),
    }


def threaded(trace, threads=4):
    results = [None] * threads

    def run(i):
        results[i] = trace()
    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return results


class NodeBuilder:
    """Builds call_function nodes through TracerBase.create_node directly, as frontends with
    their own graph construction do (no symbolic tracing, whose global patches torch allows
    in one thread at a time)."""

    def forward(self, tracer, steps):
        return [self.step(tracer, i) for i in range(steps)]

    def step(self, tracer, i):
        if i % 3 == 0:
            return tracer.create_node("call_function", torch.add, (), {})
        if i % 3 == 1:
            return helper_node(tracer)
        return tracer.create_node("call_function", torch.mul, (), {})


def helper_node(tracer):
    return tracer.create_node("call_function", torch.relu, (), {})


def built_node_traces(steps=60):
    tracer = fx.Tracer()
    tracer.graph = fx.Graph()
    tracer.record_stack_traces = True
    nodes = NodeBuilder().forward(tracer, steps)
    return [node.stack_trace for node in nodes]


class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        variance = x.pow(2).mean(-1, keepdim=True)
        return self.weight * (x * torch.rsqrt(variance + self.eps))


class Rotary(nn.Module):
    """Llama's rotary embedding: computed without gradients and with autocast off, which makes
    export run its set-grad and autocast passes over the graph."""

    def __init__(self, head_dim):
        super().__init__()
        inv_freq = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
        self.register_buffer("inv_freq", inv_freq, persistent=False)

    @torch.no_grad()
    def forward(self, x, positions):
        freqs = positions[:, :, None].float() * self.inv_freq[None, None, :]
        with torch.autocast(device_type="cpu", enabled=False):
            emb = torch.cat((freqs, freqs), dim=-1)
            return emb.cos().to(x.dtype), emb.sin().to(x.dtype)


def rotate_half(x):
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((-x2, x1), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.q, self.k, self.v, self.o = (nn.Linear(d, d, bias=False) for _ in range(4))

    def forward(self, x, cos, sin):
        b, t, _ = x.shape
        q = self.q(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        k = self.k(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        v = self.v(x).view(b, t, self.heads, self.head_dim).transpose(1, 2)
        cos, sin = cos[:, None], sin[:, None]
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.o(out.transpose(1, 2).reshape(b, t, -1))


class SwiGLU(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.gate = nn.Linear(d, 2 * d, bias=False)
        self.up = nn.Linear(d, 2 * d, bias=False)
        self.down = nn.Linear(2 * d, d, bias=False)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


class LlamaLayer(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn_norm, self.attn = RMSNorm(d), LlamaAttention(d, heads)
        self.mlp_norm, self.mlp = RMSNorm(d), SwiGLU(d)

    def forward(self, x, cos, sin):
        x = x + self.attn(self.attn_norm(x), cos, sin)
        return x + self.mlp(self.mlp_norm(x))


class Llama(nn.Module):
    """A Llama-style decoder (embedding, rotary positions, RMSNorm, attention, SwiGLU)."""

    def __init__(self, layers=4, d=32, heads=4, vocab=64):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.rotary = Rotary(d // heads)
        self.layers = nn.ModuleList(LlamaLayer(d, heads) for _ in range(layers))
        self.norm, self.head = RMSNorm(d), nn.Linear(d, vocab, bias=False)

    def forward(self, tokens):
        x = self.embed(tokens)
        positions = torch.arange(tokens.shape[1])[None].expand(tokens.shape[0], -1)
        cos, sin = self.rotary(x, positions)
        for layer in self.layers:
            x = layer(x, cos, sin)
        return self.head(self.norm(x))


def llama_tokens():
    return torch.randint(0, 64, (2, 8))
