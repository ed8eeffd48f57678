# bench/bench_torch.py — the cost of torch's graph stack traces, torch's own and callsite's.
"""Build time of an FX graph per model without stack traces, with torch's own
(``record_stack_traces``) and with callsite's (``callsite.torch.accelerate()``), all three in
one process, interleaved round-robin, minimum of several repeats.

- *cold*: the build right after ``linecache.clearcache()`` and ``callsite.torch.clear_caches()``
  (every source line is read again, every filter decision and text is made again);
- *warm*: the build right after it, with the line cache filled.

One throw-away build per mode comes first, so imports torch does on its first stack trace
(``uninteresting_files()`` imports several torch modules) are not counted in any row.

Paths: ``fx`` (``torch.fx.Tracer``, the three models), ``make_fx``
(``make_fx(record_stack_traces=True)``), ``export`` (``torch.export.export``; without stack
traces is ``torch.fx.config.do_not_emit_stack_traces``), and ``compile``
(``torch.compile(backend="eager")``: dynamo builds its stack traces from its own symbolic
frames, which no capture of the interpreter's stack sees; measured, not served: the row says
how long dynamo's stack-trace block takes, by A/B with the block skipped).

    python bench/bench_torch.py [--repeats 7] [--paths fx,make_fx,export,compile] [--json PATH]
"""
from __future__ import annotations

import argparse
import datetime
import gc
import json
import linecache
import os
import platform
import sys
import time

import _timing  # this script's folder: the result files' metadata
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import callsite.torch as ct

clock = time.perf_counter_ns


# --- models with the shapes real ones have --------------------------------------------------

class Attention(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        weights = F.softmax(q @ k.transpose(-2, -1), dim=-1)
        return self.out(weights @ v)


class AttentionBlock(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = Attention(d)
        self.up, self.down = nn.Linear(d, 2 * d), nn.Linear(2 * d, d)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class AttentionModel(nn.Module):
    def __init__(self, layers: int = 40, d: int = 16) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(AttentionBlock(d) for _ in range(layers))
        self.head = nn.Linear(d, d)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return F.log_softmax(self.head(x), dim=-1)


class MLPBlock(nn.Module):
    def __init__(self, d: int) -> None:
        super().__init__()
        self.lin = nn.Linear(d, d)

    def forward(self, x):
        return x + torch.relu(self.lin(x)) * 0.5


class MLP(nn.Module):
    def __init__(self, blocks: int = 300, d: int = 16) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(MLPBlock(d) for _ in range(blocks))

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return x


class ConvNet(nn.Module):
    def __init__(self, stages: int = 8, channels: int = 8) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, channels, 3, padding=1)
        self.convs = nn.ModuleList(nn.Conv2d(channels, channels, 3, padding=1)
                                   for _ in range(stages))
        self.norms = nn.ModuleList(nn.BatchNorm2d(channels) for _ in range(stages))

    def forward(self, x):
        x = F.relu(self.stem(x))
        for conv, norm in zip(self.convs, self.norms):
            x = x + F.relu(norm(conv(x)))
        return torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)


MODELS = {
    "attention (40 layers)": (lambda: AttentionModel(40), lambda: torch.randn(2, 5, 16)),
    "MLP (300 blocks)": (lambda: MLP(300), lambda: torch.randn(2, 16)),
    "conv net (8 stages)": (lambda: ConvNet(8), lambda: torch.randn(2, 3, 16, 16)),
}
MODES = ("none", "torch", "callsite")


# --- builds ---------------------------------------------------------------------------------

def set_mode(mode: str) -> None:
    if mode == "callsite":
        if not ct.accelerate():
            raise SystemExit(f"callsite.torch refused this torch: {ct.status()['refusal']}")
    else:
        ct.decelerate()


def fx_build(model, example, record: bool):
    tracer = fx.Tracer()
    tracer.record_stack_traces = record
    return tracer.trace(model)


def make_fx_build(model, example, record: bool):
    from torch.fx.experimental.proxy_tensor import make_fx
    return make_fx(model, record_stack_traces=record)(example).graph


def export_build(model, example, record: bool):
    fx.config.do_not_emit_stack_traces = not record
    try:
        return torch.export.export(model, (example,)).graph
    finally:
        fx.config.do_not_emit_stack_traces = False


BUILDS = {"fx": fx_build, "make_fx": make_fx_build, "export": export_build}


def timed(build, model, example, mode: str, cold: bool) -> tuple[float, list]:
    """(seconds, [(node name, stack_trace)]) of one build in `mode`."""
    set_mode(mode)
    if cold:
        linecache.clearcache()
        ct.clear_caches()
    gc.collect()
    gc.disable()
    try:
        t0 = clock()
        graph = build(model, example, mode != "none")
        elapsed = (clock() - t0) / 1e9
    finally:
        gc.enable()
    return elapsed, [(n.name, n.stack_trace) for n in graph.nodes]


def measure(path: str, name: str, repeats: int) -> dict:
    make_model, make_example = MODELS[name]
    model, example = make_model(), make_example()
    build = BUILDS[path]
    traces = {}
    for mode in MODES:  # the throw-away builds: first-use imports, and the outputs compared
        traces[mode] = timed(build, model, example, mode, cold=False)[1]
    if traces["callsite"] != traces["torch"]:
        raise SystemExit(f"{path} {name}: callsite's stack traces differ from torch's")
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for mode in MODES:
            for cold in (True, False):
                t, _ = timed(build, model, example, mode, cold)
                samples.setdefault((mode, "cold" if cold else "warm"), []).append(t)
    set_mode("none")
    best = {key: min(values) for key, values in samples.items()}
    row: dict = {"path": path, "model": name, "nodes": len(traces["torch"]),
                 "recorded": sum(1 for _, text in traces["torch"] if text),
                 "identical": True}
    for temperature in ("cold", "warm"):
        none, theirs, ours = (best[(m, temperature)] for m in MODES)
        row[temperature] = {
            "none_s": none, "torch_s": theirs, "callsite_s": ours,
            "torch_added_s": theirs - none, "callsite_added_s": ours - none,
            # added cost of torch's over callsite's (how many times less callsite adds)
            "added_ratio": (theirs - none) / (ours - none) if ours > none else None,
            "callsite_vs_none": ours / none,
            "torch_vs_none": theirs / none,
            "noise": {m: _spread(samples[(m, temperature)]) for m in MODES},
        }
    return row


def _spread(values: list[float]) -> float:
    s = sorted(values)
    return (s[len(s) // 2] - s[0]) / s[0]


# --- torch.compile: dynamo's own stack traces ------------------------------------------------

def measure_compile(name: str, repeats: int) -> dict:
    """torch.compile(backend="eager") of a fresh model, with dynamo's stack-trace block as torch
    has it and with it skipped (every translator frame treated as one of torch.nn's, which the
    block leaves out), interleaved; callsite does not change this path."""
    import torch._dynamo
    from torch._dynamo import symbolic_convert

    make_model, make_example = MODELS[name]
    example = make_example()
    translator = symbolic_convert.InstructionTranslatorBase
    original = translator.is_co_filename_from_nn_modules

    def compile_once(skip: bool) -> tuple[float, int, int]:
        torch._dynamo.reset()
        model = make_model()
        if skip:
            translator.is_co_filename_from_nn_modules = lambda self: True
        graphs = []

        def backend(gm, inputs):
            graphs.append(gm)
            return gm.forward
        gc.collect()
        try:
            t0 = clock()
            torch.compile(model, backend=backend)(example)
            elapsed = (clock() - t0) / 1e9
        finally:
            translator.is_co_filename_from_nn_modules = original
        nodes = sum(len(g.graph.nodes) for g in graphs)
        recorded = sum(1 for g in graphs for n in g.graph.nodes if n.stack_trace)
        return elapsed, nodes, recorded

    set_mode("none")
    compile_once(False)  # first-use imports
    samples: dict[str, list[float]] = {"torch": [], "skipped": []}
    nodes = recorded = 0
    for _ in range(repeats):
        t, nodes, recorded = compile_once(False)
        samples["torch"].append(t)
        samples["skipped"].append(compile_once(True)[0])
    theirs, skipped = min(samples["torch"]), min(samples["skipped"])
    return {"path": "compile", "model": name, "nodes": nodes, "recorded": recorded,
            "warm": {"torch_s": theirs, "skipped_s": skipped,
                     "stack_trace_s": theirs - skipped,
                     "stack_trace_share": (theirs - skipped) / theirs,
                     "noise": {k: _spread(v) for k, v in samples.items()}}}


# --- output ---------------------------------------------------------------------------------

def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}×" if value < 10 else f"{value:.1f}×"


def table(rows: list[dict]) -> str:
    header = ["path", "model", "nodes", "run", "no stack traces", "torch's", "callsite's",
              "torch adds", "callsite adds", "torch's added / callsite's", "callsite / none",
              "noise (max)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row in rows:
        if row["path"] == "compile":
            continue
        for temperature in ("cold", "warm"):
            r = row[temperature]
            lines.append("| " + " | ".join([
                row["path"], row["model"], str(row["nodes"]), temperature, ms(r["none_s"]),
                ms(r["torch_s"]), ms(r["callsite_s"]), ms(r["torch_added_s"]),
                ms(r["callsite_added_s"]), ratio(r["added_ratio"]), ratio(r["callsite_vs_none"]),
                f"{max(r['noise'].values()):.0%}"]) + " |")
    return "\n".join(lines)


def compile_table(rows: list[dict]) -> str:
    lines = ["| model | nodes | compile (eager backend) | with the stack-trace block skipped | "
             "stack traces | share | noise (max) |", "|---|---|---|---|---|---|---|"]
    for row in rows:
        if row["path"] != "compile":
            continue
        r = row["warm"]
        lines.append(f"| {row['model']} | {row['nodes']} | {ms(r['torch_s'])} | "
                     f"{ms(r['skipped_s'])} | {ms(r['stack_trace_s'])} | "
                     f"{r['stack_trace_share']:.1%} | {max(r['noise'].values()):.0%} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--paths", default="fx,make_fx,export,compile")
    parser.add_argument("--models", default=None,
                        help="comma-separated subset of: " + ", ".join(MODELS))
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    paths = [p for p in args.paths.split(",") if p]
    unknown = set(paths) - set(BUILDS) - {"compile"}
    if unknown:
        parser.error(f"--paths: unknown {sorted(unknown)}; known: {[*BUILDS, 'compile']}")
    models = list(MODELS) if args.models is None else args.models.split(",")
    print(f"Python {platform.python_version()}, torch {torch.__version__}, "
          f"{platform.machine()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); "
          f"min of {args.repeats} interleaved repeats")
    rows = []
    for path in paths:
        # make_fx and export on the attention model only: they run fx's tracer underneath, and
        # their decompositions take most of the build.
        for name in (models if path == "fx" else models[:1]):
            row = measure_compile(name, args.repeats) if path == "compile" \
                else measure(path, name, args.repeats)
            rows.append(row)
            print(f"  {path} {name}: {row['nodes']} nodes done", file=sys.stderr)
    print(table(rows))
    if any(r["path"] == "compile" for r in rows):
        print("\ntorch.compile: dynamo's own stack traces (not served by callsite)")
        print(compile_table(rows))
    if args.json:
        result = {"bench": "torch",
                  "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
                  "machine": f"{platform.node()} {platform.machine()} {os.cpu_count()} cores, "
                             f"load {os.getloadavg()[0]:.1f}",
                  "command": " ".join([os.path.basename(sys.executable), *sys.argv]),
                  "python": platform.python_version(), "torch": torch.__version__,
                  "repeats": args.repeats, "rows": rows}
        result["meta"] = _timing.run_metadata()
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {args.json}")


if __name__ == "__main__":
    main()
