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
from callsite._cli.timing import clock, collector_off, noise, round_robin
import deep_models  # this script's folder: models with a model library's depth

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
FRESH = {"first": MODES, "scoped": SCOPED_MODES}  # the paths of fresh processes, their modes
#: The fresh tables' ratio columns: the key of a figure, its header.
RATIOS = {"first": {"added_ratio": "torch's added / callsite's",
                    "callsite_vs_none": "callsite / none", "torch_vs_none": "torch / none"},
          "scoped": {"scoped_vs_callsite": "scoped / callsite's"}}
LABELS = {"none": "no stack traces", "torch": "torch's", "callsite": "callsite's",
          "scoped": "scoped"}
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


# --- what a recording adds: the figures of every path ----------------------------------------

def seconds(values: dict[str, float]) -> dict:
    return {f"{mode}_s": value for mode, value in values.items()}


def compared(values: dict[str, float], unit: str) -> dict:
    """torch's and callsite's figure (seconds or instructions) against the one without stack
    traces: what each adds, and each over none."""
    none, theirs, ours = (values[m] for m in MODES)
    return {f"torch_added_{unit}": theirs - none, f"callsite_added_{unit}": ours - none,
            # added cost of torch's over callsite's (how many times less callsite adds)
            "added_ratio": (theirs - none) / (ours - none) if ours > none else None,
            "callsite_vs_none": ours / none, "torch_vs_none": theirs / none}


def per_node(values: dict[str, float], nodes: int, unit: str, scale: float = 1) -> dict:
    """What each mode adds to the trace without stack traces, per node (times `scale`)."""
    return {f"{mode}_added_{unit}_per_node": (value - values["none"]) / nodes * scale
            for mode, value in values.items() if mode != "none"}


# --- fx, make_fx, export: every mode in one process ------------------------------------------

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
        best = {m: t.best / 1e9 for m, t in timed.items()}
        row[temperature] = {**seconds(best), **compared(best, "s"),
                            "noise": {m: t.noise for m, t in timed.items()}}
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
    """The kit's environment of a measured child (one BLAS thread, a fixed hash seed), without
    CALLSITE_TORCH: the parent chooses each process's mode."""
    env = _callgrind.child_env()
    env.pop("CALLSITE_TORCH", None)
    return env


def last_json_line(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])


def fresh_processes(path: str, name: str, modes: tuple[str, ...], repeats: int) -> dict:
    """mode -> fresh_child's figures of each repeat: one fresh process per (repeat, mode), the
    modes' order rotated so that none always runs first."""
    results: dict[str, list[dict]] = {m: [] for m in modes}
    for i in range(repeats):
        for mode in modes[i % 3:] + modes[:i % 3]:
            done = subprocess.run(child_argv("--fresh-child", name, mode), check=True,
                                  stdout=subprocess.PIPE, text=True, env=child_env())
            results[mode].append(last_json_line(done.stdout))
            print(f"  {path} {name}: repeat {i + 1}/{repeats} {mode}", file=sys.stderr)
    return results


def measure_fresh(path: str, name: str, repeats: int) -> dict:
    """The first trace and again in each mode of `path`, one fresh process per (repeat,
    mode): process CPU time, min and median, and what each recording adds per node."""
    modes = FRESH[path]
    results = fresh_processes(path, name, modes, repeats)
    some = results["callsite"][0]
    nodes = some["nodes"]
    row: dict = {"path": path, "model": name, "nodes": nodes, "recorded": some["recorded"],
                 "repeats": repeats, "clock": "process CPU time",
                 "torch_imports_s": statistics.median(r["imports_s"] for m in modes
                                                      for r in results[m])}
    if path == "first":
        digests = {m: {r["digest"] for r in results[m]} for m in modes}
        if len(digests["torch"]) != 1 or digests["torch"] != digests["callsite"]:
            raise SystemExit(f"first {name}: callsite's stack traces differ from torch's")
        row.update(frames=some["frames"], identical=True)
    else:  # the frames each recording keeps
        row["frames"] = {m: results[m][0]["frames"] for m in modes[1:]}
    for run in RUNS:
        cpu, wall = ({m: [r[run][key] for r in results[m]] for m in modes}
                     for key in ("cpu_s", "wall_s"))
        row[run] = {"samples_cpu_s": cpu, "samples_wall_s": wall,
                    "noise": {m: noise(cpu[m]) for m in modes}}
        for stat, pick in STATS:
            picked = {m: pick(cpu[m]) for m in modes}
            row[run][stat] = {**seconds(picked), **per_node(picked, nodes, "us", 1e6),
                              **(compared(picked, "s") if path == "first" else
                                 {"scoped_vs_callsite": picked["scoped"] / picked["callsite"]})}
    return row


def measure_instructions(path: str, name: str, keep: str | None) -> dict:
    """Ir of the first trace and of the second per mode of `path`, each in its own process,
    the number of nodes, and what each recording adds; with `keep`, the callgrind files stay
    there as torch[-scoped]-MODEL-MODE-RUN.out."""
    if why := _callgrind.missing():
        return {"skipped": why}
    prefix = "torch" if path == "first" else "torch-scoped"
    out: dict = {}
    for run in RUNS:
        counts = {}
        for mode in FRESH[path]:
            kept = os.path.join(keep, f"{prefix}-{name.split()[0]}-{mode}-{run}.out") \
                if keep else "/dev/null"
            counts[mode], stdout = _callgrind.count(
                child_argv("--callgrind-child", name, mode, run), out=kept,
                toggle=_callgrind.TOGGLE, env=child_env())
            print(f"  callgrind {name}: {run} {mode} {counts[mode]:,} Ir", file=sys.stderr)
        nodes = out["nodes"] = last_json_line(stdout)["nodes"]
        added = {m: counts[m] - counts["none"] for m in counts}
        out[run] = {"ir": counts, **per_node(counts, nodes, "ir"),
                    **(compared(counts, "ir") if path == "first" else
                       {"scoped_vs_callsite_added": added["scoped"] / added["callsite"]})}
    return out


def fresh_row(path: str, name: str, args) -> dict:
    """One deep model's row of `path`: timed unless --callgrind-only (the first-trace path),
    counted with --callgrind or --callgrind-only."""
    if args.callgrind_only and path == "first":
        row = {"path": path, "model": name}
    else:
        row = measure_fresh(path, name, args.repeats)
    if args.callgrind or args.callgrind_only:
        row["instructions"] = measure_instructions(path, name, args.keep_callgrind)
        row.setdefault("nodes", row["instructions"].get("nodes"))
    return row


# --- torch.compile: dynamo's own stack traces ------------------------------------------------

def measure_compile(name: str, repeats: int) -> dict:
    """torch.compile(backend="eager") of a fresh model, with dynamo's stack-trace block as torch
    has it and with it skipped (every translator frame treated as one of torch.nn's, which the
    block leaves out), round-robin; callsite does not change this path."""
    import torch._dynamo
    from torch._dynamo import symbolic_convert

    make_model, make_example = MODELS[name]
    example = make_example()
    translator = symbolic_convert.InstructionTranslatorBase
    original = translator.is_co_filename_from_nn_modules
    graphs: dict[str, list] = {}

    def compile_ns(label: str, _iterations: int) -> int:
        torch._dynamo.reset()
        model = make_model()
        graphs[label] = []

        def backend(gm, inputs):
            graphs[label].append(gm)
            return gm.forward
        if label == "skipped":
            translator.is_co_filename_from_nn_modules = lambda self: True
        gc.collect()  # round_robin keeps the collector off: each compile starts collected
        try:
            t0 = clock()
            torch.compile(model, backend=backend)(example)
            return clock() - t0
        finally:
            translator.is_co_filename_from_nn_modules = original

    set_mode("none")
    compile_ns("torch", 1)  # first-use imports
    timings = round_robin(compile_ns, ("torch", "skipped"), repeats=repeats)
    theirs, skipped = (timings[label].best / 1e9 for label in ("torch", "skipped"))
    nodes = [n for g in graphs["torch"] for n in g.graph.nodes]
    return {"path": "compile", "model": name, "nodes": len(nodes),
            "recorded": sum(1 for n in nodes if n.stack_trace),
            "warm": {"torch_s": theirs, "skipped_s": skipped,
                     "stack_trace_s": theirs - skipped,
                     "stack_trace_share": (theirs - skipped) / theirs,
                     "noise": {label: t.noise for label, t in timings.items()}}}


# --- output ---------------------------------------------------------------------------------

def ms(seconds: float) -> str:
    return f"{seconds * 1e3:,.1f} ms"


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


def frames_kept(row: dict) -> str:
    """Frames per capture, mean/max, of each recording that keeps captures."""
    kept = row["frames"] if row["path"] == "scoped" else {"callsite": row["frames"]}
    return ", ".join(f"{m} {f['mean']:.1f}/{f['max']}" for m, f in kept.items())


def fresh_table(rows: list[dict], path: str) -> str:
    """The rows of `path`: each model's first trace and again, min and median, per mode."""
    modes = FRESH[path]
    recorded = modes[1:]
    counted = any("first" in r.get("instructions", {}) for r in rows if r["path"] == path)
    header = ["model", "nodes", "frames (mean/max)", "trace", "stat",
              *(LABELS[m] for m in modes), *(f"{LABELS[m]} adds /node" for m in recorded),
              *RATIOS[path].values(),
              *(f"Ir added /node ({LABELS[m]})" for m in recorded if counted), "noise (max)"]
    lines = []
    for row in (r for r in rows if r["path"] == path):
        for run in RUNS:
            ir = row.get("instructions", {}).get(run, {})
            for stat, _ in STATS:
                r = row[run][stat]
                lines.append([
                    row["model"], row["nodes"], frames_kept(row), run, stat,
                    *(ms(r[f"{m}_s"]) for m in modes),
                    *(f"{r[f'{m}_added_us_per_node']:.1f} µs" for m in recorded),
                    *(fmt_ratio(r[key]) for key in RATIOS[path]),
                    *(f"{ir[f'{m}_added_ir_per_node']:,.0f}" for m in recorded if counted),
                    fmt_noise(max(row[run]["noise"].values()))])
    return markdown_table(header, lines, align="lrlll" + "r" * (len(header) - 5))


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
    children = {"--fresh-child": fresh_child, "--callgrind-child": callgrind_child}
    if sys.argv[1:2] and sys.argv[1] in children:  # a measured process the parent started
        print(json.dumps(children[sys.argv[1]](*sys.argv[2:])))
        return
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=7)
    parser.add_argument("--paths", type=_common.names(PATHS),
                        default="first,fx,make_fx,export,compile")
    parser.add_argument("--callgrind", action="store_true",
                        help="the fresh-process paths also count instructions (valgrind)")
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
    if set(FRESH) & set(args.paths) and args.repeats < 2:
        parser.error(f"--repeats: at least 2 for the first-trace path, got {args.repeats}")
    models = [m for m in args.models or MODELS if m in MODELS]
    deep = [m for m in args.models or deep_models.MODELS if m in deep_models.MODELS]
    print(f"Python {platform.python_version()}, torch {torch.__version__}, "
          f"{platform.machine()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); "
          f"min of {args.repeats} interleaved repeats")
    rows = []
    for path in args.paths:
        if path in FRESH:
            rows.extend(fresh_row(path, name, args) for name in deep)
            continue
        # make_fx and export on the first model only: they run fx's tracer underneath, and
        # their decompositions take most of the build.
        for name in (models if path == "fx" else models[:1]):
            rows.append(measure_compile(name, args.repeats) if path == "compile"
                        else measure(path, name, args.repeats))
            print(f"  {path} {name}: {rows[-1]['nodes']} nodes done", file=sys.stderr)
    paths = {r["path"] for r in rows}
    if "first" in paths:
        print("\nThe first trace in a fresh process, and again (deep models, the library's "
              "tracer; process CPU time)")
        if not args.callgrind_only:
            print(fresh_table(rows, "first"))
        if args.callgrind or args.callgrind_only:
            import cold_report  # the docs' tables: one format for both
            print("\nInstructions (callgrind, only the measured trace collected)")
            print("\n".join(cold_report.torch_instruction_lines(rows)))
    if "scoped" in paths:
        print("\nThe scoped mode (callsite.torch.frames, every frame outside torch's files) "
              "beside callsite's default recording (deep models; process CPU time; Ir: "
              "callgrind, the measured trace alone)")
        print(fresh_table(rows, "scoped"))
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
