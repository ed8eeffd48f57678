# bench/bench_torch.py — the cost of torch's graph stack traces, torch's own and callsite's.
"""Build time of an FX graph per model without stack traces, with torch's own
(``record_stack_traces``) and with callsite's (``callsite.torch.accelerate()``), all three in
one process, interleaved round-robin, minimum of several repeats.

- *rebuilt*: a build right after ``linecache.clearcache()`` and ``callsite.torch.clear_caches()``
  (every source line is read again, every filter decision and text is made again) in a
  process that has built the model before: its modules are imported, its code objects exist
  and torch's filter has run, so this is not a first trace (path ``first`` measures that);
- *warm*: the build right after it, with the line cache filled.

One throw-away build per mode comes first, so imports torch does on its first stack trace
(``uninteresting_files()`` imports several torch modules) are not counted in any row.

The first trace in a process (path ``first``): ``deep_models.py``'s models, as deep as a model
library's (30–50 frames at each node: nested modules, decorated ``forward``s, a tracer subclass),
traced by that tracer in a fresh process per repeat and mode, twice: *first* (the process's first
trace: no source line read, every cache empty; the ten modules torch's filter imports on its
first use, ``uninteresting_files()``, are imported before it in every mode and their time is
reported on its own) and *again* (the
same model traced a second time in that process). Each repeat runs the three modes in turn, each in
its own process (the order rotates from repeat to repeat); CPU time of the process
(``time.process_time``, so time the process waits for a core is not counted; wall time is in the
result file too); min and median of the repeats. ``--profile`` prints cProfile's view of
callsite's first trace instead.

Paths: ``fx`` (``torch.fx.Tracer``, the three models), ``make_fx``
(``make_fx(record_stack_traces=True)``), ``export`` (``torch.export.export``; without stack
traces is ``torch.fx.config.do_not_emit_stack_traces``), and ``compile``
(``torch.compile(backend="eager")``: dynamo builds its stack traces from its own symbolic
frames, which no capture of the interpreter's stack sees; measured, not served: the row says
how long dynamo's stack-trace block takes, by A/B with the block skipped). ``scoped``: the deep
models' first trace and again as in ``first``, without stack traces, with callsite's default
recording and under ``callsite.torch.frames(filter)`` (a Filter keeping every frame outside
torch's files, no limit), with ``--callgrind`` their instructions per node.

    python bench/bench_torch.py [--repeats 7] [--paths first,fx,make_fx,export,compile] [--json PATH]
    python bench/bench_torch.py --paths first --repeats 8 --json PATH   # the cold path only
    python bench/bench_torch.py --paths scoped --repeats 5 --callgrind  # frames() beside default
    python bench/bench_torch.py --profile [--models NAME]                # where callsite's time goes
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

import _common  # this script's folder: options and the result file
import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F

import callsite
import callsite.torch as ct
from callsite._cli.timing import noise
import deep_models  # this script's folder: models with a model library's depth

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


def timed(build, model, example, mode: str, rebuilt: bool) -> tuple[float, list]:
    """(seconds, [(node name, stack_trace)]) of one build in `mode`; `rebuilt`: the line cache
    and callsite's caches emptied first."""
    set_mode(mode)
    if rebuilt:
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
        traces[mode] = timed(build, model, example, mode, rebuilt=False)[1]
    if traces["callsite"] != traces["torch"]:
        raise SystemExit(f"{path} {name}: callsite's stack traces differ from torch's")
    samples: dict[tuple[str, str], list[float]] = {}
    for _ in range(repeats):
        for mode in MODES:
            for rebuilt in (True, False):
                t, _ = timed(build, model, example, mode, rebuilt)
                samples.setdefault((mode, "rebuilt" if rebuilt else "warm"), []).append(t)
    set_mode("none")
    best = {key: min(values) for key, values in samples.items()}
    row: dict = {"path": path, "model": name, "nodes": len(traces["torch"]),
                 "recorded": sum(1 for _, text in traces["torch"] if text),
                 "identical": True}
    for temperature in ("rebuilt", "warm"):
        none, theirs, ours = (best[(m, temperature)] for m in MODES)
        row[temperature] = {
            "none_s": none, "torch_s": theirs, "callsite_s": ours,
            "torch_added_s": theirs - none, "callsite_added_s": ours - none,
            # added cost of torch's over callsite's (how many times less callsite adds)
            "added_ratio": (theirs - none) / (ours - none) if ours > none else None,
            "callsite_vs_none": ours / none,
            "torch_vs_none": theirs / none,
            "noise": {m: noise(samples[(m, temperature)]) for m in MODES},
        }
    return row


# --- the first trace in a fresh process, and again -------------------------------------------

def fresh_child(name: str, mode: str) -> dict:
    """Runs in a fresh process: the model `name` traced twice by the library's tracer in `mode`;
    each trace's CPU and wall time, and what the parent compares across modes."""
    torch.manual_seed(0)
    make_model, _ = deep_models.MODELS[name]
    model = make_model()
    if mode != "none":
        set_mode(mode)
    out: dict = {"mode": mode, "imports_s": _torch_imports()}
    for run in ("first", "again"):
        gc.collect()
        gc.disable()
        try:
            with recording(mode):
                wall, cpu = time.perf_counter(), time.process_time()
                graph = deep_models.trace(model, mode != "none")
                cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        finally:
            gc.enable()
        out[run] = {"cpu_s": cpu, "wall_s": wall}
        texts = [(n.name, n.stack_trace) for n in graph.nodes]
        if run == "first":
            out["nodes"] = len(texts)
            out["recorded"] = sum(1 for _, text in texts if text)
            out["digest"] = hashlib.sha256(repr(texts).encode()).hexdigest()
            if mode in ("callsite", "scoped"):
                sizes = [len(tb) for tb in map(ct.traceback_of, graph.nodes) if tb is not None]
                out["frames"] = {"mean": statistics.mean(sizes), "max": max(sizes)}
        elif hashlib.sha256(repr(texts).encode()).hexdigest() != out["digest"]:
            raise SystemExit(f"{name} {mode}: the second trace's stack traces differ")
    return out


def _torch_imports() -> float:
    """torch's filter imports ten of torch's modules the first time it runs
    (symbolic_shapes.uninteresting_files(), cached): done before the first trace in every mode,
    so that the first trace's figures are the recording's and not torch's imports (the same in
    every mode); returns the CPU seconds they took."""
    from torch.fx.experimental import symbolic_shapes
    cpu = time.process_time()
    symbolic_shapes.uninteresting_files()
    return time.process_time() - cpu


def _child_env() -> dict:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    env.pop("CALLSITE_TORCH", None)  # the parent chooses each process's mode
    return env


def run_child(name: str, mode: str) -> dict:
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--fresh-child", name, mode],
                       capture_output=True, text=True, env=_child_env())
    if r.returncode:
        raise SystemExit(f"the fresh process for {name!r} in mode {mode} failed:\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def measure_first(name: str, repeats: int) -> dict:
    """first/again x none/torch/callsite, one fresh process per (repeat, mode)."""
    results: dict[str, list[dict]] = {m: [] for m in MODES}
    for i in range(repeats):
        for mode in MODES[i % 3:] + MODES[:i % 3]:  # rotated: no mode always runs first
            results[mode].append(run_child(name, mode))
            print(f"  first {name}: repeat {i + 1}/{repeats} {mode}", file=sys.stderr)
    digests = {m: {r["digest"] for r in results[m]} for m in MODES}
    if len(digests["torch"]) != 1 or digests["torch"] != digests["callsite"]:
        raise SystemExit(f"first {name}: callsite's stack traces differ from torch's")
    some = results["callsite"][0]
    row: dict = {"path": "first", "model": name, "nodes": some["nodes"],
                 "recorded": some["recorded"], "frames": some["frames"], "identical": True,
                 "repeats": repeats, "clock": "process CPU time",
                 "torch_imports_s": statistics.median(r["imports_s"] for m in MODES
                                                      for r in results[m])}
    for run in ("first", "again"):
        cpu = {m: [r[run]["cpu_s"] for r in results[m]] for m in MODES}
        wall = {m: [r[run]["wall_s"] for r in results[m]] for m in MODES}
        entry: dict = {"samples_cpu_s": cpu, "samples_wall_s": wall}
        for stat, pick in (("min", min), ("median", statistics.median)):
            none, theirs, ours = (pick(cpu[m]) for m in MODES)
            entry[stat] = {
                "none_s": none, "torch_s": theirs, "callsite_s": ours,
                "torch_added_s": theirs - none, "callsite_added_s": ours - none,
                "added_ratio": (theirs - none) / (ours - none) if ours > none else None,
                "callsite_vs_none": ours / none, "torch_vs_none": theirs / none,
                "torch_added_us_per_node": (theirs - none) / row["nodes"] * 1e6,
                "callsite_added_us_per_node": (ours - none) / row["nodes"] * 1e6,
            }
        entry["noise"] = {m: noise(cpu[m]) for m in MODES}
        row[run] = entry
    return row


def per_run_and_stat(rows: list[dict], path: str):
    """(row, run, stat, figures) for each row of `path`, its first trace and again, min and
    median: the lines of the fresh-process tables."""
    for row in rows:
        if row["path"] == path:
            for run in ("first", "again"):
                for stat in ("min", "median"):
                    yield row, run, stat, row[run][stat]


def first_table(rows: list[dict]) -> str:
    header = ["model", "nodes", "frames (mean/max)", "trace", "stat", "no stack traces",
              "torch's", "callsite's", "torch adds /node", "callsite adds /node",
              "torch's added / callsite's", "callsite / none", "torch / none", "noise (max)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row, run, stat, r in per_run_and_stat(rows, "first"):
        lines.append("| " + " | ".join([
            row["model"], str(row["nodes"]),
            f"{row['frames']['mean']:.1f}/{row['frames']['max']}", run, stat,
            ms(r["none_s"]), ms(r["torch_s"]), ms(r["callsite_s"]),
            f"{r['torch_added_us_per_node']:.1f} µs",
            f"{r['callsite_added_us_per_node']:.1f} µs", ratio(r["added_ratio"]),
            ratio(r["callsite_vs_none"]), ratio(r["torch_vs_none"]),
            f"{max(row[run]['noise'].values()):.0%}"]) + " |")
    return "\n".join(lines)


# --- instruction counts of the first trace and again (callgrind) ------------------------------

#: callgrind collects only inside this CPython function (sysmodule.c): the measured trace runs
#: inside sys.call_tracing, so imports, the model's construction and the other trace are not
#: counted.
TOGGLE = "sys_call_tracing"


def callgrind_child(name: str, mode: str, run: str) -> dict:
    """Under valgrind: the model traced twice in `mode`; only the `run` trace is collected."""
    torch.manual_seed(0)
    model = deep_models.MODELS[name][0]()
    if mode != "none":
        set_mode(mode)
    _torch_imports()
    gc.collect()
    gc.disable()
    for which in ("first", "again"):
        with recording(mode):
            if which == run:
                sys.call_tracing(deep_models.trace, (model, mode != "none"))
            else:
                deep_models.trace(model, mode != "none")
    gc.enable()
    return {"mode": mode, "run": run, "nodes": len(deep_models.trace(model, False).nodes)}


def count_instructions(name: str, keep: str | None, modes: tuple[str, ...],
                       prefix: str = "torch") -> tuple[dict[str, dict[str, int]], int]:
    """Ir of the first trace and of the second per mode, each in its own process, and the
    number of nodes; with `keep`, the callgrind files stay there as
    PREFIX-MODEL-MODE-RUN.out."""
    counts: dict[str, dict[str, int]] = {}
    for run in ("first", "again"):
        for mode in modes:
            out = "/dev/null"
            if keep:
                tag = name.split()[0]
                out = os.path.join(keep, f"{prefix}-{tag}-{mode}-{run}.out")
            r = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                                "--collect-atstart=no", f"--toggle-collect={TOGGLE}",
                                sys.executable, os.path.abspath(__file__), "--callgrind-child",
                                name, mode, run], capture_output=True, text=True,
                               env={**_child_env(), "PYTHONHASHSEED": "0"})
            line = [x for x in r.stderr.splitlines() if "Collected" in x]
            if r.returncode or not line:
                raise SystemExit(f"callgrind run failed: {r.stderr.strip().splitlines()[-3:]}")
            counts.setdefault(run, {})[mode] = int(line[0].split()[-1].replace(",", ""))
            nodes = json.loads(r.stdout.strip().splitlines()[-1])["nodes"]
            print(f"  callgrind {name}: {run} {mode} {counts[run][mode]:,} Ir", file=sys.stderr)
    return counts, nodes


def measure_instructions(name: str, keep: str | None) -> dict:
    """Ir of the first trace and of the second, per mode, each in its own process."""
    import shutil
    if not shutil.which("valgrind"):
        return {"skipped": "valgrind not installed"}
    counts, nodes = count_instructions(name, keep, MODES)
    out_rows: dict = {"nodes": nodes}
    for run, c in counts.items():
        added_t, added_c = c["torch"] - c["none"], c["callsite"] - c["none"]
        out_rows[run] = {"ir": c, "torch_added_ir": added_t, "callsite_added_ir": added_c,
                         "added_ratio": added_t / added_c if added_c > 0 else None,
                         "callsite_vs_none": c["callsite"] / c["none"],
                         "torch_vs_none": c["torch"] / c["none"]}
    return out_rows


def instructions_table(rows: list[dict]) -> str:
    import cold_report  # the docs' tables: one format for both

    return "\n".join(cold_report.torch_instruction_lines(rows))


# --- the scoped mode (callsite.torch.frames) beside the default one ---------------------------

SCOPED_MODES = ("none", "callsite", "scoped")


def measure_scoped(name: str, repeats: int, callgrind: bool, keep: str | None = None) -> dict:
    """The first trace in a fresh process and again, without stack traces, with callsite's
    default recording (torch's rules) and under frames(user_filter()), one fresh process per
    (repeat, mode), the order rotated; with `callgrind`, their instruction counts too."""
    results: dict[str, list[dict]] = {m: [] for m in SCOPED_MODES}
    for i in range(repeats):
        for mode in SCOPED_MODES[i % 3:] + SCOPED_MODES[:i % 3]:
            results[mode].append(run_child(name, mode))
            print(f"  scoped {name}: repeat {i + 1}/{repeats} {mode}", file=sys.stderr)
    some = results["scoped"][0]
    nodes = some["nodes"]
    row: dict = {"path": "scoped", "model": name, "nodes": nodes, "repeats": repeats,
                 "frames": {m: results[m][0].get("frames") for m in ("callsite", "scoped")},
                 "clock": "process CPU time"}
    for run in ("first", "again"):
        cpu = {m: [r[run]["cpu_s"] for r in results[m]] for m in SCOPED_MODES}
        entry: dict = {"samples_cpu_s": cpu, "noise": {m: noise(cpu[m]) for m in cpu}}
        for stat, pick in (("min", min), ("median", statistics.median)):
            none, default, scoped = (pick(cpu[m]) for m in SCOPED_MODES)
            entry[stat] = {"none_s": none, "callsite_s": default, "scoped_s": scoped,
                           "callsite_added_us_per_node": (default - none) / nodes * 1e6,
                           "scoped_added_us_per_node": (scoped - none) / nodes * 1e6,
                           "scoped_vs_callsite": scoped / default}
        row[run] = entry
    if callgrind:
        import shutil
        if not shutil.which("valgrind"):
            row["instructions"] = {"skipped": "valgrind not installed"}
        else:
            counts, _ = count_instructions(name, keep, SCOPED_MODES, prefix="torch-scoped")
            row["instructions"] = {run: {
                "ir": c,
                "callsite_added_ir_per_node": (c["callsite"] - c["none"]) / nodes,
                "scoped_added_ir_per_node": (c["scoped"] - c["none"]) / nodes,
                "scoped_vs_callsite_added": (c["scoped"] - c["none"]) / (c["callsite"] - c["none"])}
                for run, c in counts.items()}
    return row


def scoped_table(rows: list[dict]) -> str:
    header = ["model", "nodes", "frames kept (default/scoped, mean)", "trace", "stat",
              "no stack traces", "callsite's (torch's rules)", "scoped", "scoped / default",
              "default adds /node", "scoped adds /node", "Ir added /node (default)",
              "Ir added /node (scoped)", "noise (max)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for row, run, stat, r in per_run_and_stat(rows, "scoped"):
        frames = row["frames"]
        ir = row.get("instructions", {}).get(run)
        lines.append("| " + " | ".join([
            row["model"], str(row["nodes"]),
            f"{frames['callsite']['mean']:.1f}/{frames['scoped']['mean']:.1f}", run, stat,
            ms(r["none_s"]), ms(r["callsite_s"]), ms(r["scoped_s"]),
            ratio(r["scoped_vs_callsite"]),
            f"{r['callsite_added_us_per_node']:.1f} µs",
            f"{r['scoped_added_us_per_node']:.1f} µs",
            f"{ir['callsite_added_ir_per_node']:,.0f}" if ir else "—",
            f"{ir['scoped_added_ir_per_node']:,.0f}" if ir else "—",
            f"{max(row[run]['noise'].values()):.0%}"]) + " |")
    return "\n".join(lines)


# --- cProfile of callsite's first trace: where its time goes ---------------------------------

#: stage -> the functions whose inclusive time is that stage (file suffix, function name); a
#: builtin's "file" is "~" and its name ends with the given text.
_MODULE = "callsite/torch/__init__.py"
PROFILE_STAGES = {
    "native recording (_TorchTexts.record: capture, decisions, text lookup, source files "
    "read, meta write), its Python callbacks included": [
        ("~", "<method 'record' of 'callsite._callsite._TorchTexts' objects>")],
    "frames formatted by Python (_format_frame: unusual lines)": [
        (_MODULE, "_format_frame")],
    "stacks formatted by Python (_format_stack: repetition cut-off, native frames)": [
        (_MODULE, "_format_stack")],
    "torch's rules (_load_rules)": [(_MODULE, "_load_rules")],
    "Python path (_record_through_override, _record_in_python)": [
        (_MODULE, "_record_through_override"), (_MODULE, "_record_in_python")],
    "text: StackSummary.format, source lines included": [("traceback.py", "format")],
}


def _matches(key: tuple[str, int, str], suffix: str, wanted: str) -> bool:
    filename, _, function = key
    return filename.endswith(suffix) and (
        function == wanted or suffix == "~" and function.endswith(wanted))


def profile_first(name: str, mode: str) -> dict:
    """cProfile of the first trace in this (fresh) process: inclusive seconds per stage of
    callsite's recording (cProfile's own cost per call inflates stages of many small calls)."""
    import cProfile
    import pstats

    torch.manual_seed(0)
    model = deep_models.MODELS[name][0]()
    set_mode(mode)
    _torch_imports()
    profiler = cProfile.Profile(time.process_time)  # CPU time: waits for a core not counted
    gc.disable()
    profiler.enable()
    deep_models.trace(model, mode != "none")
    profiler.disable()
    gc.enable()
    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    total = sum(tt for (_, _, tt, _, _) in stats.values())

    def inclusive(suffix: str, wanted: str) -> float:
        return sum(v[3] for k, v in stats.items() if _matches(k, suffix, wanted))

    stages = {stage: sum(inclusive(*f) for f in functions)
              for stage, functions in PROFILE_STAGES.items()}
    # Source lines: linecache's functions as called from traceback.py (FrameSummary.line, under
    # StackSummary.format), not from elsewhere in the trace.
    lines = 0.0
    for key, (_, _, _, _, callers) in stats.items():
        if key[0].endswith("linecache.py"):
            lines += sum(edge[3] for caller, edge in callers.items()
                         if caller[0].endswith("traceback.py"))
    stages["source lines (linecache, from FrameSummary.line)"] = lines
    stages["formatting alone (format minus source lines)"] = \
        stages["text: StackSummary.format, source lines included"] - lines
    record = inclusive(_MODULE, "_record_stack_trace")
    # The native recording's own work: its time minus the Python it calls back.
    stages["native recording alone (record minus its callbacks)"] = stages[
        "native recording (_TorchTexts.record: capture, decisions, text lookup, source files "
        "read, meta write), its Python callbacks included"] - sum(stages[k] for k in (
            "frames formatted by Python (_format_frame: unusual lines)",
            "stacks formatted by Python (_format_stack: repetition cut-off, native frames)"))
    stages["the rest: _record_stack_trace's own checks (tracer's filter, rules), the meta "
           "write when Node's setter is more"] = record - sum(stages[k] for k in (
               "native recording (_TorchTexts.record: capture, decisions, text lookup, source "
               "files read, meta write), its Python callbacks included",
               "torch's rules (_load_rules)",
               "Python path (_record_through_override, _record_in_python)"))
    return {"mode": mode, "model": name, "trace_s": total, "record_stack_trace_s": record,
            "stages_s": stages}


def print_profile(name: str) -> None:
    r = subprocess.run([sys.executable, os.path.abspath(__file__), "--profile-child", name,
                        "callsite"], capture_output=True, text=True, env=_child_env())
    if r.returncode:
        raise SystemExit(r.stderr)
    p = json.loads(r.stdout.strip().splitlines()[-1])
    record = p["record_stack_trace_s"]
    print(f"\ncProfile, first trace of {name} with callsite (profiler overhead included): trace "
          f"{ms(p['trace_s'])}, callsite's recording (_record_stack_trace, inclusive) {ms(record)}")
    print("| stage | inclusive | share of the recording |\n|---|---|---|")
    for stage, seconds in p["stages_s"].items():
        if stage.startswith("text:"):
            continue  # shown as its two parts
        print(f"| {stage} | {ms(seconds)} | {seconds / record:.1%} |")


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
                     "noise": {k: noise(v) for k, v in samples.items()}}}


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
        if row["path"] in ("compile", "first"):
            continue
        for temperature in ("rebuilt", "warm"):
            r = row[temperature]
            noise = max(r["noise"].values())
            added = ratio(r["added_ratio"])
            if r["added_ratio"] is not None and r["callsite_added_s"] / r["none_s"] < noise:
                added += ", in the noise"  # callsite's part is smaller than the repeats' spread
            lines.append("| " + " | ".join([
                row["path"], row["model"], str(row["nodes"]), temperature, ms(r["none_s"]),
                ms(r["torch_s"]), ms(r["callsite_s"]), ms(r["torch_added_s"]),
                ms(r["callsite_added_s"]), added, ratio(r["callsite_vs_none"]),
                f"{noise:.0%}"]) + " |")
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
                     f"{r['stack_trace_share']:.1%}"
                     f"{', in the noise' if r['stack_trace_share'] < max(r['noise'].values()) else ''}"
                     f" | {max(r['noise'].values()):.0%} |")
    return "\n".join(lines)


def main() -> None:
    if len(sys.argv) == 5 and sys.argv[1] == "--callgrind-child":
        print(json.dumps(callgrind_child(sys.argv[2], sys.argv[3], sys.argv[4])))
        return
    if len(sys.argv) == 4 and sys.argv[1] in ("--fresh-child", "--profile-child"):
        child = fresh_child if sys.argv[1] == "--fresh-child" else profile_first
        print(json.dumps(child(sys.argv[2], sys.argv[3])))
        return
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=7)
    parser.add_argument("--paths", default="first,fx,make_fx,export,compile")
    parser.add_argument("--callgrind", action="store_true",
                        help="the first-trace path also counts instructions (valgrind)")
    parser.add_argument("--callgrind-only", action="store_true",
                        help="the first-trace path's instruction counts alone (no timing)")
    parser.add_argument("--keep-callgrind", metavar="DIR", type=_common.output_dir,
                        help="keep the callgrind files of --callgrind or --callgrind-only here "
                             "(created when missing)")
    parser.add_argument("--profile", action="store_true",
                        help="cProfile of callsite's first trace of each deep model, then exit")
    parser.add_argument("--models", default=None,
                        help="comma-separated subset of: " + ", ".join(MODELS))
    args = parser.parse_args()
    paths = [p for p in args.paths.split(",") if p]
    unknown = set(paths) - set(BUILDS) - {"compile", "first", "scoped"}
    if unknown:
        parser.error(f"--paths: unknown {sorted(unknown)}; known: "
                     f"{['first', 'scoped', *BUILDS, 'compile']}")
    if args.keep_callgrind and not (args.callgrind or args.callgrind_only):
        parser.error("--keep-callgrind keeps the files of --callgrind or --callgrind-only, "
                     "neither of which is given")
    if ("first" in paths or "scoped" in paths) and args.repeats < 2:
        parser.error(f"--repeats: at least 2 for the first-trace path, got {args.repeats}")
    models = list(MODELS) if args.models is None else args.models.split(",")
    deep = list(deep_models.MODELS) if args.models is None else \
        [m for m in args.models.split(",") if m in deep_models.MODELS]
    if args.profile:
        for name in deep:
            print_profile(name)
        return
    print(f"Python {platform.python_version()}, torch {torch.__version__}, "
          f"{platform.machine()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); "
          f"min of {args.repeats} interleaved repeats")
    rows = []
    for path in paths:
        if path == "scoped":
            rows.extend(measure_scoped(name, args.repeats, args.callgrind, args.keep_callgrind)
                        for name in deep)
            continue
        if path == "first":
            for name in deep:
                row = {"path": "first", "model": name} if args.callgrind_only else \
                    measure_first(name, args.repeats)
                if args.callgrind or args.callgrind_only:
                    row["instructions"] = measure_instructions(name, args.keep_callgrind)
                    row.setdefault("nodes", row["instructions"].get("nodes"))
                rows.append(row)
            continue
        # make_fx and export on the attention model only: they run fx's tracer underneath, and
        # their decompositions take most of the build.
        for name in (models if path == "fx" else models[:1]):
            row = measure_compile(name, args.repeats) if path == "compile" \
                else measure(path, name, args.repeats)
            rows.append(row)
            print(f"  {path} {name}: {row['nodes']} nodes done", file=sys.stderr)
    if any(r["path"] == "first" for r in rows):
        print("\nThe first trace in a fresh process, and again (deep models, the library's "
              "tracer; process CPU time)")
        if not args.callgrind_only:
            print(first_table(rows))
        if args.callgrind or args.callgrind_only:
            print("\nInstructions (callgrind, only the measured trace collected)")
            print(instructions_table(rows))
    if any(r["path"] == "scoped" for r in rows):
        print("\nThe scoped mode (callsite.torch.frames, every frame outside torch's files) "
              "beside callsite's default recording (deep models; process CPU time; Ir: "
              "callgrind, the measured trace alone)")
        print(scoped_table(rows))
    if any(r["path"] not in ("first", "compile", "scoped") for r in rows):
        print(f"\nfx, make_fx, export: every mode in this one process (wall time, minimum of "
              f"{args.repeats}); rebuilt: after emptying the line cache and callsite's caches, "
              f"warm: the build after it")
        print(table(rows))
    if any(r["path"] == "compile" for r in rows):
        print("\ntorch.compile: dynamo's own stack traces (not served by callsite)")
        print(compile_table(rows))
    if args.json:
        _common.write_results(args.json, "torch", {"torch": torch.__version__,
                                                   "repeats": args.repeats, "rows": rows})


if __name__ == "__main__":
    main()
