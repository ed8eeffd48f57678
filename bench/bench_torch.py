# bench/bench_torch.py — the cost of torch's graph stack traces, torch's own and callsite's.
"""Build time of an FX graph per model without stack traces, with torch's own
(``record_stack_traces``) and with callsite's (``callsite.torch.accelerate()``).

- ``fx``, ``make_fx``, ``export``: the three modes in one process, round-robin, minimum of the
  repeats, wall time; *rebuilt* after ``linecache.clearcache()`` and
  ``callsite.torch.clear_caches()`` (not a first trace: the process built the model before, its
  modules are imported and torch's filter has run), *warm* the build right after it. A
  throw-away build per mode first keeps torch's first-use imports out of every row.
- ``first``: ``deep_models.py``'s models traced twice in a fresh process per repeat and mode
  (the order rotating), *first* (every cache empty; the modules torch's filter imports on first
  use are imported before it, timed apart) and *again*; process CPU time, so waiting for a core
  is not counted; min and median. ``--callgrind`` also counts instructions, ``--callgrind-only``
  only those.
- ``scoped``: as ``first``, without stack traces, with callsite's default recording and under
  ``callsite.torch.frames(filter)`` keeping every frame outside torch's files.
- ``compile``: dynamo records from its own symbolic frames, which no capture of the
  interpreter's stack sees, so callsite does not serve it; the row is dynamo's stack-trace
  block, by A/B with the block skipped.

    python bench/bench_torch.py [--repeats 7] [--paths first,fx,make_fx,export,compile] [--json PATH]
    python bench/bench_torch.py --paths first --repeats 8 --json PATH   # the cold path only
    python bench/bench_torch.py --paths scoped --repeats 5 --callgrind  # frames() beside default
"""
from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import linecache
import os
import platform
import statistics
import subprocess
import sys
import time

import _callgrind  # this script's folder: the one way to count instructions
import _common  # this script's folder: options and the result file
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import callsite
import callsite.torch as ct
from callsite._cli.tables import fmt_noise, fmt_ratio, markdown_table
from callsite._cli.timing import collector_off, noise, round_robin
import deep_models  # this script's folder: models with a model library's depth

clock = time.perf_counter_ns
PATHS = ("first", "scoped", "fx", "make_fx", "export", "compile")
RUNS = ("first", "again")  # the two traces of a fresh process
STATS = (("min", min), ("median", statistics.median))


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
SCOPED_MODES = ("none", "callsite", "scoped")
TEMPERATURES = ("rebuilt", "warm")


# --- builds ---------------------------------------------------------------------------------

def set_mode(mode: str) -> None:
    if mode in ("callsite", "scoped"):
        if not ct.accelerate():
            raise SystemExit(f"callsite.torch refused this torch: {ct.status()['refusal']}")
    else:
        ct.decelerate()


def user_filter() -> "callsite.Filter":
    """The scoped mode's Filter: every frame outside torch's own files, no limit (the whole
    stack is walked and kept, the most a scope can cost)."""
    chosen = callsite.Filter(limit=None)
    chosen.exclude_dir(os.path.dirname(torch.__file__))
    return chosen


def recording(mode: str):
    """The scope a trace in `mode` runs in: callsite.torch.frames(user_filter()) for "scoped"
    (callsite's recorder with the user's frames), nothing for the others."""
    return ct.frames(user_filter()) if mode == "scoped" else contextlib.nullcontext()


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


def texts(graph) -> list[tuple[str, str | None]]:
    """(node name, stack_trace) of every node: what the modes' graphs must agree on."""
    return [(n.name, n.stack_trace) for n in graph.nodes]


def compared(none: float, theirs: float, ours: float) -> dict:
    """One measure without stack traces, with torch's and with callsite's, and what each adds."""
    return {"none_s": none, "torch_s": theirs, "callsite_s": ours,
            "torch_added_s": theirs - none, "callsite_added_s": ours - none,
            # added cost of torch's over callsite's (how many times less callsite adds)
            "added_ratio": (theirs - none) / (ours - none) if ours > none else None,
            "callsite_vs_none": ours / none, "torch_vs_none": theirs / none}


def measure(path: str, name: str, repeats: int) -> dict:
    """Every (mode, rebuilt or warm) build of one model in this process, round-robin."""
    make_model, make_example = MODELS[name]
    model, example = make_model(), make_example()
    build = BUILDS[path]
    traces = {}
    for mode in MODES:  # the throw-away builds: first-use imports, and the outputs compared
        set_mode(mode)
        traces[mode] = texts(build(model, example, mode != "none"))
    if traces["callsite"] != traces["torch"]:
        raise SystemExit(f"{path} {name}: callsite's stack traces differ from torch's")

    def build_ns(label: str, _iterations: int) -> int:
        mode, temperature = label.split("/")
        set_mode(mode)
        if temperature == "rebuilt":
            linecache.clearcache()
            ct.clear_caches()
        gc.collect()  # round_robin keeps the collector off: each build starts collected
        t0 = clock()
        graph = build(model, example, mode != "none")
        elapsed = clock() - t0
        texts(graph)  # every node's text read, as in the throw-away builds
        return elapsed

    timings = round_robin(build_ns, [f"{m}/{t}" for m in MODES for t in TEMPERATURES],
                          repeats=repeats)
    set_mode("none")
    row: dict = {"path": path, "model": name, "nodes": len(traces["torch"]),
                 "recorded": sum(1 for _, text in traces["torch"] if text), "identical": True}
    for temperature in TEMPERATURES:
        timed = {m: timings[f"{m}/{temperature}"] for m in MODES}
        row[temperature] = {**compared(*(timed[m].best / 1e9 for m in MODES)),
                            "noise": {m: timed[m].noise for m in MODES}}
    return row


# --- the first trace in a fresh process, and again -------------------------------------------

def fresh_model(name: str, mode: str) -> tuple[nn.Module, float]:
    """In a fresh process: the deep model `name`, `mode` set, and the CPU seconds of torch's
    filter's first-use imports, done here so that the first trace's figures are the recording's
    and not those imports' (the same in every mode)."""
    torch.manual_seed(0)
    model = deep_models.MODELS[name][0]()
    if mode != "none":
        set_mode(mode)
    from torch.fx.experimental import symbolic_shapes
    cpu = time.process_time()
    symbolic_shapes.uninteresting_files()  # cached: imports torch's modules once
    return model, time.process_time() - cpu


def fresh_child(name: str, mode: str) -> dict:
    """Runs in a fresh process: the model traced twice in `mode`; each trace's CPU and wall
    time, and what the parent compares across modes."""
    model, imports_s = fresh_model(name, mode)
    out: dict = {"mode": mode, "imports_s": imports_s}
    for run in RUNS:
        with collector_off(), recording(mode):
            wall, cpu = time.perf_counter(), time.process_time()
            graph = deep_models.trace(model, mode != "none")
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        out[run] = {"cpu_s": cpu, "wall_s": wall}
        found = texts(graph)
        digest = hashlib.sha256(repr(found).encode()).hexdigest()
        if run == "again" and digest != out["digest"]:
            raise SystemExit(f"{name} {mode}: the second trace's stack traces differ")
        if run == "first":
            out.update(nodes=len(found), recorded=sum(1 for _, text in found if text),
                       digest=digest)
            if mode in ("callsite", "scoped"):
                sizes = [len(tb) for tb in map(ct.traceback_of, graph.nodes) if tb is not None]
                out["frames"] = {"mean": statistics.mean(sizes), "max": max(sizes)}
    return out


def callgrind_child(name: str, mode: str, run: str) -> dict:
    """Under callgrind: the model traced twice in `mode`, the `run` trace inside
    sys.call_tracing, the one function collected."""
    model, _ = fresh_model(name, mode)
    with collector_off():
        for which in RUNS:
            with recording(mode):
                if which == run:
                    sys.call_tracing(deep_models.trace, (model, mode != "none"))
                else:
                    deep_models.trace(model, mode != "none")
    return {"mode": mode, "run": run, "nodes": len(deep_models.trace(model, False).nodes)}


def child_argv(*args: str) -> list[str]:
    return [sys.executable, os.path.abspath(__file__), *args]


def child_env() -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("CALLSITE_TORCH", None)  # the parent chooses each process's mode
    return env


def last_json_line(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def fresh_processes(path: str, name: str, modes: tuple[str, ...], repeats: int) -> dict:
    """mode -> fresh_child's figures of each repeat: one fresh process per (repeat, mode), the
    modes' order rotated so that none always runs first."""
    results: dict[str, list[dict]] = {m: [] for m in modes}
    for i in range(repeats):
        for mode in modes[i % 3:] + modes[:i % 3]:
            r = subprocess.run(child_argv("--fresh-child", name, mode), capture_output=True,
                               text=True, env=child_env())
            if r.returncode:
                raise SystemExit(f"the fresh process for {name!r} in mode {mode} failed:\n"
                                 f"{r.stderr}")
            results[mode].append(last_json_line(r.stdout))
            print(f"  {path} {name}: repeat {i + 1}/{repeats} {mode}", file=sys.stderr)
    return results


def samples(results: dict, run: str, clock_s: str = "cpu_s") -> dict[str, list[float]]:
    return {m: [r[run][clock_s] for r in results[m]] for m in results}


def per_stat(cpu: dict[str, list[float]], modes: tuple[str, ...], figures) -> dict:
    """min and median: figures(*that statistic of each mode's samples)."""
    return {stat: figures(*(pick(cpu[m]) for m in modes)) for stat, pick in STATS}


def measure_first(name: str, repeats: int) -> dict:
    """first/again x none/torch/callsite, one fresh process per (repeat, mode)."""
    results = fresh_processes("first", name, MODES, repeats)
    digests = {m: {r["digest"] for r in results[m]} for m in MODES}
    if len(digests["torch"]) != 1 or digests["torch"] != digests["callsite"]:
        raise SystemExit(f"first {name}: callsite's stack traces differ from torch's")
    some = results["callsite"][0]
    nodes = some["nodes"]
    row: dict = {"path": "first", "model": name, "nodes": nodes,
                 "recorded": some["recorded"], "frames": some["frames"], "identical": True,
                 "repeats": repeats, "clock": "process CPU time",
                 "torch_imports_s": statistics.median(r["imports_s"] for m in MODES
                                                      for r in results[m])}

    def figures(none: float, theirs: float, ours: float) -> dict:
        return {**compared(none, theirs, ours),
                "torch_added_us_per_node": (theirs - none) / nodes * 1e6,
                "callsite_added_us_per_node": (ours - none) / nodes * 1e6}
    for run in RUNS:
        cpu = samples(results, run)
        row[run] = {"samples_cpu_s": cpu, "samples_wall_s": samples(results, run, "wall_s"),
                    **per_stat(cpu, MODES, figures), "noise": {m: noise(cpu[m]) for m in MODES}}
    return row


def measure_scoped(name: str, repeats: int, callgrind: bool, keep: str | None = None) -> dict:
    """The first trace and again without stack traces, with callsite's default recording
    (torch's rules) and under frames(user_filter()), as measure_first; with `callgrind`, their
    instruction counts too."""
    results = fresh_processes("scoped", name, SCOPED_MODES, repeats)
    nodes = results["scoped"][0]["nodes"]
    row: dict = {"path": "scoped", "model": name, "nodes": nodes, "repeats": repeats,
                 "frames": {m: results[m][0].get("frames") for m in ("callsite", "scoped")},
                 "clock": "process CPU time"}

    def figures(none: float, default: float, scoped: float) -> dict:
        return {"none_s": none, "callsite_s": default, "scoped_s": scoped,
                "callsite_added_us_per_node": (default - none) / nodes * 1e6,
                "scoped_added_us_per_node": (scoped - none) / nodes * 1e6,
                "scoped_vs_callsite": scoped / default}
    for run in RUNS:
        cpu = samples(results, run)
        row[run] = {"samples_cpu_s": cpu, "noise": {m: noise(cpu[m]) for m in cpu},
                    **per_stat(cpu, SCOPED_MODES, figures)}
    if callgrind and (why := _callgrind.missing()):
        row["instructions"] = {"skipped": why}
    elif callgrind:
        counts, _ = count_instructions(name, keep, SCOPED_MODES, prefix="torch-scoped")
        row["instructions"] = {run: {
            "ir": c,
            "callsite_added_ir_per_node": (c["callsite"] - c["none"]) / nodes,
            "scoped_added_ir_per_node": (c["scoped"] - c["none"]) / nodes,
            "scoped_vs_callsite_added": (c["scoped"] - c["none"]) / (c["callsite"] - c["none"])}
            for run, c in counts.items()}
    return row


# --- instruction counts of the first trace and again (callgrind) ------------------------------

def count_instructions(name: str, keep: str | None, modes: tuple[str, ...],
                       prefix: str = "torch") -> tuple[dict[str, dict[str, int]], int]:
    """Ir of the first trace and of the second per mode, each in its own process, and the
    number of nodes; with `keep`, the callgrind files stay there as
    PREFIX-MODEL-MODE-RUN.out."""
    counts: dict[str, dict[str, int]] = {}
    for run in RUNS:
        for mode in modes:
            out = os.path.join(keep, f"{prefix}-{name.split()[0]}-{mode}-{run}.out") \
                if keep else "/dev/null"
            ir, stdout = _callgrind.count(child_argv("--callgrind-child", name, mode, run),
                                          out=out, toggle=_callgrind.TOGGLE, env=child_env())
            counts.setdefault(run, {})[mode] = ir
            nodes = last_json_line(stdout)["nodes"]
            print(f"  callgrind {name}: {run} {mode} {ir:,} Ir", file=sys.stderr)
    return counts, nodes


def measure_instructions(name: str, keep: str | None) -> dict:
    """Ir of the first trace and of the second, per mode, each in its own process."""
    if why := _callgrind.missing():
        return {"skipped": why}
    counts, nodes = count_instructions(name, keep, MODES)
    out: dict = {"nodes": nodes}
    for run, c in counts.items():
        added_t, added_c = c["torch"] - c["none"], c["callsite"] - c["none"]
        out[run] = {"ir": c, "torch_added_ir": added_t, "callsite_added_ir": added_c,
                    "added_ratio": added_t / added_c if added_c > 0 else None,
                    "callsite_vs_none": c["callsite"] / c["none"],
                    "torch_vs_none": c["torch"] / c["none"]}
    return out


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
        nodes = [n for g in graphs for n in g.graph.nodes]
        return elapsed, len(nodes), sum(1 for n in nodes if n.stack_trace)

    set_mode("none")
    compile_once(False)  # first-use imports
    times: dict[str, list[float]] = {"torch": [], "skipped": []}
    nodes = recorded = 0
    for _ in range(repeats):
        t, nodes, recorded = compile_once(False)
        times["torch"].append(t)
        times["skipped"].append(compile_once(True)[0])
    theirs, skipped = min(times["torch"]), min(times["skipped"])
    return {"path": "compile", "model": name, "nodes": nodes, "recorded": recorded,
            "warm": {"torch_s": theirs, "skipped_s": skipped,
                     "stack_trace_s": theirs - skipped,
                     "stack_trace_share": (theirs - skipped) / theirs,
                     "noise": {k: noise(v) for k, v in times.items()}}}


# --- output ---------------------------------------------------------------------------------

def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


def us(microseconds: float) -> str:
    return f"{microseconds:.1f} µs"


def in_the_noise(text: str, share: float, spread: float) -> str:
    """`text`, marked when the part it measures (`share` of the whole) is smaller than the
    repeats' spread: the clock does not resolve it."""
    return f"{text}, in the noise" if share < spread else text


def table(rows: list[dict]) -> str:
    header = ["path", "model", "nodes", "run", "no stack traces", "torch's", "callsite's",
              "torch adds", "callsite adds", "torch's added / callsite's", "callsite / none",
              "noise (max)"]
    lines = []
    for row in (r for r in rows if r["path"] in BUILDS):
        for temperature in TEMPERATURES:
            r = row[temperature]
            spread = max(r["noise"].values())
            added = fmt_ratio(r["added_ratio"])
            if r["added_ratio"] is not None:
                added = in_the_noise(added, r["callsite_added_s"] / r["none_s"], spread)
            lines.append([row["path"], row["model"], row["nodes"], temperature, ms(r["none_s"]),
                          ms(r["torch_s"]), ms(r["callsite_s"]), ms(r["torch_added_s"]),
                          ms(r["callsite_added_s"]), added, fmt_ratio(r["callsite_vs_none"]),
                          fmt_noise(spread)])
    return markdown_table(header, lines, align="llrl" + "r" * 8)


def per_run_and_stat(rows: list[dict], path: str):
    """(row, run, stat, figures) for each row of `path`, its first trace and again, min and
    median: the lines of the fresh-process tables."""
    for row in (r for r in rows if r["path"] == path):
        for run in RUNS:
            for stat, _ in STATS:
                yield row, run, stat, row[run][stat]


def first_table(rows: list[dict]) -> str:
    header = ["model", "nodes", "frames (mean/max)", "trace", "stat", "no stack traces",
              "torch's", "callsite's", "torch adds /node", "callsite adds /node",
              "torch's added / callsite's", "callsite / none", "torch / none", "noise (max)"]
    return markdown_table(header, ([
        row["model"], row["nodes"], f"{row['frames']['mean']:.1f}/{row['frames']['max']}", run,
        stat, ms(r["none_s"]), ms(r["torch_s"]), ms(r["callsite_s"]),
        us(r["torch_added_us_per_node"]), us(r["callsite_added_us_per_node"]),
        fmt_ratio(r["added_ratio"]), fmt_ratio(r["callsite_vs_none"]),
        fmt_ratio(r["torch_vs_none"]), fmt_noise(max(row[run]["noise"].values()))]
        for row, run, stat, r in per_run_and_stat(rows, "first")), align="lrrll" + "r" * 9)


def scoped_table(rows: list[dict]) -> str:
    header = ["model", "nodes", "frames kept (default/scoped, mean)", "trace", "stat",
              "no stack traces", "callsite's (torch's rules)", "scoped", "scoped / default",
              "default adds /node", "scoped adds /node", "Ir added /node (default)",
              "Ir added /node (scoped)", "noise (max)"]
    lines = []
    for row, run, stat, r in per_run_and_stat(rows, "scoped"):
        frames = row["frames"]
        ir = row.get("instructions", {}).get(run)
        lines.append([
            row["model"], row["nodes"],
            f"{frames['callsite']['mean']:.1f}/{frames['scoped']['mean']:.1f}", run, stat,
            ms(r["none_s"]), ms(r["callsite_s"]), ms(r["scoped_s"]),
            fmt_ratio(r["scoped_vs_callsite"]), us(r["callsite_added_us_per_node"]),
            us(r["scoped_added_us_per_node"]),
            f"{ir['callsite_added_ir_per_node']:,.0f}" if ir else "—",
            f"{ir['scoped_added_ir_per_node']:,.0f}" if ir else "—",
            fmt_noise(max(row[run]["noise"].values()))])
    return markdown_table(header, lines, align="lrrll" + "r" * 9)


def compile_table(rows: list[dict]) -> str:
    header = ["model", "nodes", "compile (eager backend)", "with the stack-trace block skipped",
              "stack traces", "share", "noise (max)"]
    return markdown_table(header, ([
        row["model"], row["nodes"], ms(r["torch_s"]), ms(r["skipped_s"]),
        ms(r["stack_trace_s"]),
        in_the_noise(f"{r['stack_trace_share']:.1%}", r["stack_trace_share"],
                     max(r["noise"].values())),
        fmt_noise(max(r["noise"].values()))]
        for row in rows if row["path"] == "compile" for r in [row["warm"]]))


def main() -> None:
    if sys.argv[1:2] == ["--callgrind-child"]:
        print(json.dumps(callgrind_child(*sys.argv[2:5])))
        return
    if sys.argv[1:2] == ["--fresh-child"]:
        print(json.dumps(fresh_child(*sys.argv[2:4])))
        return
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=7)
    parser.add_argument("--paths", type=_common.names(PATHS),
                        default="first,fx,make_fx,export,compile")
    parser.add_argument("--callgrind", action="store_true",
                        help="the first-trace path also counts instructions (valgrind)")
    parser.add_argument("--callgrind-only", action="store_true",
                        help="the first-trace path's instruction counts alone (no timing)")
    parser.add_argument("--keep-callgrind", metavar="DIR", type=_common.output_dir,
                        help="keep the callgrind files of --callgrind or --callgrind-only here "
                             "(created when missing)")
    parser.add_argument("--models", type=_common.names((*MODELS, *deep_models.MODELS)),
                        help="comma-separated subset of: "
                             + ", ".join((*MODELS, *deep_models.MODELS)))
    args = parser.parse_args()
    if args.keep_callgrind and not (args.callgrind or args.callgrind_only):
        parser.error("--keep-callgrind keeps the files of --callgrind or --callgrind-only, "
                     "neither of which is given")
    if {"first", "scoped"} & set(args.paths) and args.repeats < 2:
        parser.error(f"--repeats: at least 2 for the first-trace path, got {args.repeats}")
    models = [m for m in args.models or MODELS if m in MODELS]
    deep = [m for m in args.models or deep_models.MODELS if m in deep_models.MODELS]
    counting = args.callgrind or args.callgrind_only
    print(f"Python {platform.python_version()}, torch {torch.__version__}, "
          f"{platform.machine()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); "
          f"min of {args.repeats} interleaved repeats")
    rows = []
    for path in args.paths:
        if path == "scoped":
            rows.extend(measure_scoped(name, args.repeats, args.callgrind, args.keep_callgrind)
                        for name in deep)
        elif path == "first":
            for name in deep:
                row = {"path": "first", "model": name} if args.callgrind_only else \
                    measure_first(name, args.repeats)
                if counting:
                    row["instructions"] = measure_instructions(name, args.keep_callgrind)
                    row.setdefault("nodes", row["instructions"].get("nodes"))
                rows.append(row)
        else:  # make_fx and export on the first model only: they run fx's tracer underneath,
            # and their decompositions take most of the build.
            for name in (models if path == "fx" else models[:1]):
                rows.append(measure_compile(name, args.repeats) if path == "compile"
                            else measure(path, name, args.repeats))
                print(f"  {path} {name}: {rows[-1]['nodes']} nodes done", file=sys.stderr)
    paths = {r["path"] for r in rows}
    if "first" in paths:
        print("\nThe first trace in a fresh process, and again (deep models, the library's "
              "tracer; process CPU time)")
        if not args.callgrind_only:
            print(first_table(rows))
        if counting:
            import cold_report  # the docs' tables: one format for both
            print("\nInstructions (callgrind, only the measured trace collected)")
            print("\n".join(cold_report.torch_instruction_lines(rows)))
    if "scoped" in paths:
        print("\nThe scoped mode (callsite.torch.frames, every frame outside torch's files) "
              "beside callsite's default recording (deep models; process CPU time; Ir: "
              "callgrind, the measured trace alone)")
        print(scoped_table(rows))
    if paths & set(BUILDS):
        print(f"\nfx, make_fx, export: every mode in this one process (wall time, minimum of "
              f"{args.repeats}); rebuilt: after emptying the line cache and callsite's caches, "
              f"warm: the build after it")
        print(table(rows))
    if "compile" in paths:
        print("\ntorch.compile: dynamo's own stack traces (not served by callsite)")
        print(compile_table(rows))
    if args.json:
        _common.write_results(args.json, "torch", {"torch": torch.__version__,
                                                   "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
