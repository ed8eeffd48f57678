# bench/deep_models.py — models with the depth of real model libraries, for the cold-path benchmark.
"""Models nested as a model library nests them, traced by a library's ``fx.Tracer`` subclass, so
that a node is created as deep as in a library's own trace. Per module level: torch's patched
``Module.__call__``, the tracer's ``call_module`` (the subclass's, then ``fx.Tracer``'s), the
decorators' ``functools.wraps`` wrappers (as libraries write them for deprecated keywords and
output conversion) and the ``forward``; at the node, the subclass's ``create_proxy`` and torch's
``create_proxy`` / ``create_node``. ``bench_torch.py --paths first`` traces them; its
``make_fx``, ``export`` and ``compile`` paths build the same models from their example inputs.
"""
from __future__ import annotations

import functools

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F


# --- decorators as libraries write them ------------------------------------------------------

def deprecate_kwarg(old: str, new: str):
    """A keyword renamed in a later version: the old name still accepted."""
    def decorator(forward):
        @functools.wraps(forward)
        def wrapper(self, *args, **kwargs):
            if old in kwargs:
                kwargs[new] = kwargs.pop(old)
            return forward(self, *args, **kwargs)
        return wrapper
    return decorator


def can_return_tuple(forward):
    """Output conversion: a tuple when the caller asks for one."""
    @functools.wraps(forward)
    def wrapper(self, *args, return_tuple: bool = False, **kwargs):
        output = forward(self, *args, **kwargs)
        return (output,) if return_tuple else output
    return wrapper


# --- the tracer subclass ---------------------------------------------------------------------

class LibraryTracer(fx.Tracer):
    """A library's tracer: its own create_proxy, call_module and getattr around torch's (as
    model libraries' tracers do, to record shapes and keep their modules as leaves), recording
    stack traces with torch's default filter."""

    def __init__(self, record: bool = True) -> None:
        super().__init__()
        self.record_stack_traces = record
        self.module_calls = 0

    def create_proxy(self, kind, target, args, kwargs, name=None, type_expr=None,
                     proxy_factory_fn=None):
        proxy = super().create_proxy(kind, target, args, kwargs, name, type_expr,
                                     proxy_factory_fn)
        proxy.node.meta.setdefault("library", kind)
        return proxy

    def call_module(self, m, forward, args, kwargs):
        self.module_calls += 1
        return super().call_module(m, forward, args, kwargs)

    def getattr(self, attr, attr_val, parameter_proxy_cache):
        return super().getattr(attr, attr_val, parameter_proxy_cache)

    def is_leaf_module(self, m, module_qualified_name):
        return isinstance(m, (nn.Linear, nn.Conv1d, nn.Conv2d, nn.LayerNorm, nn.BatchNorm2d,
                              nn.Embedding, nn.Dropout))


# --- a transformer as a model library nests it ------------------------------------------------

class Projection(nn.Module):
    def __init__(self, d_in: int, d_out: int) -> None:
        super().__init__()
        self.dense = nn.Linear(d_in, d_out)

    def forward(self, x):
        return self.dense(x)


class SelfAttention(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, d // heads
        self.query, self.key, self.value = Projection(d, d), Projection(d, d), Projection(d, d)

    def split_heads(self, x):
        b, t, _ = x.shape
        return x.view(b, t, self.heads, self.head_dim).transpose(1, 2)

    @deprecate_kwarg("hidden_states", "x")
    def forward(self, x):
        q, k, v = (self.split_heads(p(x)) for p in (self.query, self.key, self.value))
        scores = q @ k.transpose(-2, -1) / (self.head_dim ** 0.5)
        probs = F.softmax(scores, dim=-1)
        b, _, t, _ = probs.shape
        return (probs @ v).transpose(1, 2).reshape(b, t, -1)


class AttentionOutput(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.dense, self.norm, self.dropout = nn.Linear(d, d), nn.LayerNorm(d), nn.Dropout(0.0)

    def forward(self, x, residual):
        return self.norm(self.dropout(self.dense(x)) + residual)


class AttentionBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.self_attn, self.output = SelfAttention(d, heads), AttentionOutput(d)

    def forward(self, x):
        return self.output(self.self_attn(x), x)


class GELUActivation(nn.Module):
    def forward(self, x):
        return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * (x + 0.044715 * x.pow(3))))


class Intermediate(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.up, self.act = Projection(d, 2 * d), GELUActivation()

    def forward(self, x):
        return self.act(self.up(x))


class MLPOutput(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.down, self.norm = Projection(2 * d, d), nn.LayerNorm(d)

    def forward(self, x, residual):
        return self.norm(self.down(x) + residual)


class MLPBlock(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.intermediate, self.output = Intermediate(d), MLPOutput(d)

    @can_return_tuple
    def forward(self, x):
        return self.output(self.intermediate(x), x)


class ConvModule(nn.Module):
    """A convolution block of a speech/vision transformer: pointwise, GLU, depthwise."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.pointwise = nn.Conv1d(d, 2 * d, 1)
        self.depthwise = nn.Conv1d(d, d, 3, padding=1, groups=d)
        self.norm = nn.LayerNorm(d)

    @deprecate_kwarg("hidden_states", "x")
    def forward(self, x):
        h = F.glu(self.pointwise(x.transpose(1, 2)), dim=1)
        h = F.silu(self.depthwise(h)).transpose(1, 2)
        return self.norm(h + x)


class Layer(nn.Module):
    def __init__(self, d: int, heads: int, conv: bool) -> None:
        super().__init__()
        self.attention, self.mlp = AttentionBlock(d, heads), MLPBlock(d)
        self.conv = ConvModule(d) if conv else None

    @can_return_tuple
    def forward(self, x):
        x = self.attention(x)
        if self.conv is not None:
            x = self.conv(x)
        return self.mlp(x)


class Encoder(nn.Module):
    def __init__(self, layers: int, d: int, heads: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList(Layer(d, heads, conv=i % 2 == 1) for i in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class Transformer(nn.Module):
    def __init__(self, layers: int = 6, d: int = 16, heads: int = 2, vocab: int = 32) -> None:
        super().__init__()
        self.embed, self.encoder = nn.Embedding(vocab, d), Encoder(layers, d, heads)
        self.head = nn.Linear(d, vocab)

    @can_return_tuple
    def forward(self, tokens):
        return F.log_softmax(self.head(self.encoder(self.embed(tokens))), dim=-1)


# --- a residual convolution network as a vision library nests it -----------------------------

class ConvNormAct(nn.Module):
    def __init__(self, c_in: int, c_out: int, stride: int = 1) -> None:
        super().__init__()
        self.conv = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False)
        self.norm = nn.BatchNorm2d(c_out)

    @deprecate_kwarg("input", "x")
    def forward(self, x):
        return F.relu(self.norm(self.conv(x)))


class Bottleneck(nn.Module):
    def __init__(self, c: int) -> None:
        super().__init__()
        self.reduce, self.mix, self.expand = ConvNormAct(c, c // 2), ConvNormAct(c // 2, c // 2), \
            ConvNormAct(c // 2, c)

    @can_return_tuple
    def forward(self, x):
        return F.relu(self.expand(self.mix(self.reduce(x))) + x)


class Stage(nn.Module):
    def __init__(self, c: int, blocks: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(Bottleneck(c) for _ in range(blocks))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class Backbone(nn.Module):
    def __init__(self, stages: int, blocks: int, c: int) -> None:
        super().__init__()
        self.stem = ConvNormAct(3, c)
        self.stages = nn.ModuleList(Stage(c, blocks) for _ in range(stages))

    def forward(self, x):
        x = self.stem(x)
        for stage in self.stages:
            x = stage(x)
        return x


class ResNet(nn.Module):
    def __init__(self, stages: int = 4, blocks: int = 3, c: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.backbone, self.fc = Backbone(stages, blocks, c), nn.Linear(c, classes)

    @can_return_tuple
    def forward(self, x):
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(self.backbone(x), 1), 1))


#: name -> (model factory, example input factory); seeded, so every process builds the same.
MODELS = {
    "transformer (6 layers)": (lambda: Transformer(6), lambda: torch.randint(0, 32, (2, 8))),
    "resnet (4x3 blocks)": (lambda: ResNet(4, 3), lambda: torch.randn(2, 3, 16, 16)),
}


def trace(model: nn.Module, record: bool) -> fx.Graph:
    return LibraryTracer(record).trace(model)
