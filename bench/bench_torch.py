# bench/bench_torch.py — the cost of torch's graph stack traces, torch's own and callsite's.
"""Build time of an FX graph of ``deep_models.py``'s library-depth models without stack traces,
with torch's own (``record_stack_traces``) and with callsite's (``callsite.torch.accelerate()``),
the case users run: each model built twice in a fresh process per repeat and mode (the order
rotating), *first* (every cache empty; the modules torch's filter imports on first use are
imported before it, timed apart) and *again*; process CPU time, so waiting for a core is not
counted; min and median. Every path checks that callsite's stack traces are torch's.

- ``first``: the library's ``fx.Tracer`` subclass. ``--callgrind`` also counts instructions,
  ``--callgrind-only`` only those.
- ``scoped``: as ``first``, without stack traces, with callsite's default recording and under
  ``callsite.torch.frames(filter)`` keeping every frame outside torch's files.
- ``make_fx``, ``export``: as ``first``, built by ``make_fx(model, record_stack_traces=...)`` and
  by ``torch.export.export`` (``fx.config.do_not_emit_stack_traces`` for none).
- ``compile``: dynamo records from its own symbolic frames, which no capture of the
  interpreter's stack sees, so callsite does not serve it; the row is dynamo's stack-trace
  block, by A/B with the block skipped (eager backend).

    python bench/bench_torch.py [--repeats 7] [--paths first,make_fx,export,compile] [--json PATH]
    python bench/bench_torch.py --paths first --repeats 8 --json PATH   # the cold path only
    python bench/bench_torch.py --paths scoped --repeats 5 --callgrind  # frames() beside default
"""
from __future__ import annotations

import contextlib
import hashlib
import json
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

import callsite
import callsite.torch as ct
from callsite._cli.tables import fmt_noise, fmt_ratio
from callsite._cli.timing import collector_off, noise
import deep_models  # this script's folder: models with a model library's depth

benchmark_tables = _common.page_tables()

RUNS = ("first", "again")  # the two builds of a fresh process
STATS = (("min", min), ("median", statistics.median))
MODES = ("none", "torch", "callsite")
#: The paths (all in fresh processes) and their modes, the baseline first.
FRESH = {"first": MODES, "scoped": ("none", "callsite", "scoped"), "make_fx": MODES,
         "export": MODES, "compile": ("skipped", "torch")}
LABELS = {"none": "no stack traces", "callsite": "callsite's", "scoped": "scoped"}
#: The docs' tables (benchmark_tables.COLD_TABLES) this script prints, each with its title.
PRINTED = {
    "torch-first": "The first trace in a fresh process, and again (deep models, the library's "
                   "tracer; process CPU time, ms)",
    "torch-instructions": "Instructions (callgrind, only the measured trace collected)",
    "torch-paths": "make_fx and torch.export: the first build in a fresh process, and again "
                   "(process CPU time, ms)",
    "torch-compile": "torch.compile (eager backend): dynamo's own stack traces, not served by "
                     "callsite (process CPU time, ms)",
}


# --- builds ---------------------------------------------------------------------------------

def set_mode(mode: str) -> None:
    """callsite's recorder for "callsite" and "scoped"; for "skipped", dynamo's stack-trace
    block skipped (every translator frame treated as one of torch.nn's, which the block leaves
    out)."""
    if mode in ("callsite", "scoped"):
        if not ct.accelerate():
            raise SystemExit(f"callsite.torch refused this torch: {ct.status()['refusal']}")
    elif mode == "skipped":
        from torch._dynamo import symbolic_convert
        symbolic_convert.InstructionTranslatorBase.is_co_filename_from_nn_modules = \
            lambda self: True


def recording(mode: str):
    """The scope a trace in `mode` runs in: for "scoped", callsite.torch.frames() keeping every
    frame outside torch's own files, no limit (the whole stack is walked and kept, the most a
    scope can cost); nothing for the others."""
    if mode != "scoped":
        return contextlib.nullcontext()
    outside_torch = callsite.Filter(limit=None)
    outside_torch.exclude_dir(os.path.dirname(torch.__file__))
    return ct.frames(outside_torch)


def trace_build(model, example, record: bool):
    return deep_models.trace(model, record).nodes


def make_fx_build(model, example, record: bool):
    from torch.fx.experimental.proxy_tensor import make_fx
    return make_fx(model, record_stack_traces=record)(example).graph.nodes


def export_build(model, example, record: bool):
    fx.config.do_not_emit_stack_traces = not record
    try:
        return torch.export.export(model, (example,)).graph.nodes
    finally:
        fx.config.do_not_emit_stack_traces = False


def compile_build(model, example, record: bool):
    """The nodes of every graph dynamo hands the backend, which runs them as they are."""
    graphs = []

    def backend(gm, inputs):
        graphs.append(gm)
        return gm.forward
    torch.compile(model, backend=backend)(example)
    return [node for gm in graphs for node in gm.graph.nodes]


BUILDS = {"first": trace_build, "scoped": trace_build, "make_fx": make_fx_build,
          "export": export_build, "compile": compile_build}


# --- what a recording adds ------------------------------------------------------------------

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


def figures(path: str, picked: dict[str, float], nodes: int) -> dict:
    """A statistic's seconds per mode of `path` and what its modes are compared by."""
    out = {f"{mode}_s": value for mode, value in picked.items()}
    if path == "compile":  # dynamo's block: the compile against the one with the block skipped
        block = picked["torch"] - picked["skipped"]
        return {**out, "stack_trace_s": block, "stack_trace_share": block / picked["torch"]}
    out.update(per_node(picked, nodes, "us", 1e6))
    if path == "scoped":
        return {**out, "scoped_vs_callsite": picked["scoped"] / picked["callsite"]}
    return {**out, **compared(picked, "s")}


# --- the first build in a fresh process, and again -------------------------------------------

def fresh_model(name: str, mode: str) -> tuple[nn.Module, torch.Tensor, float]:
    """In a fresh process: the deep model `name` and its example input, `mode` set, and the CPU
    seconds of torch's filter's first-use imports, done here so that the first build's figures
    are the recording's and not those imports' (the same in every mode)."""
    torch.manual_seed(0)
    make_model, make_example = deep_models.MODELS[name]
    model, example = make_model(), make_example()
    set_mode(mode)
    from torch.fx.experimental import symbolic_shapes
    cpu = time.process_time()
    symbolic_shapes.uninteresting_files()  # cached: imports torch's modules once
    return model, example, time.process_time() - cpu


def fresh_child(path: str, name: str, mode: str) -> dict:
    """Runs in a fresh process: the model built twice by `path` in `mode`; each build's CPU and
    wall time, and what the parent compares across modes."""
    if path == "compile":
        import torch._dynamo  # imported before the first compile, as torch's filter's modules
    model, example, imports_s = fresh_model(name, mode)
    out: dict = {"mode": mode, "imports_s": imports_s}
    for run in RUNS:
        if path == "compile":
            torch._dynamo.reset()  # the second compile compiles again, not from dynamo's cache
        with collector_off(), recording(mode):
            wall, cpu = time.perf_counter(), time.process_time()
            nodes = BUILDS[path](model, example, mode != "none")
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        out[run] = {"cpu_s": cpu, "wall_s": wall}
        found = [(n.name, n.stack_trace) for n in nodes]  # what the modes' graphs agree on
        digest = hashlib.sha256(repr(found).encode()).hexdigest()
        if run == "again" and digest != out["digest"]:
            raise SystemExit(f"{path} {name} {mode}: the second build's stack traces differ")
        if run == "first":
            out.update(nodes=len(found), recorded=sum(1 for _, text in found if text),
                       digest=digest)
            if mode in ("callsite", "scoped"):
                sizes = [len(tb) for tb in map(ct.traceback_of, nodes) if tb is not None]
                out["frames"] = {"mean": statistics.mean(sizes), "max": max(sizes)}
    return out


def callgrind_child(name: str, mode: str, run: str) -> dict:
    """Under callgrind: the model traced twice in `mode`, the `run` trace inside
    sys.call_tracing, the one function collected."""
    model, _, _ = fresh_model(name, mode)
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


def fresh_processes(path: str, name: str, repeats: int) -> dict:
    """mode -> fresh_child's figures of each repeat: one fresh process per (repeat, mode), the
    modes' order rotated so that none always runs first."""
    modes = FRESH[path]
    results: dict[str, list[dict]] = {m: [] for m in modes}
    for i in range(repeats):
        turn = i % len(modes)
        for mode in modes[turn:] + modes[:turn]:
            done = subprocess.run(child_argv("--fresh-child", path, name, mode), check=True,
                                  stdout=subprocess.PIPE, text=True, env=child_env())
            results[mode].append(last_json_line(done.stdout))
            print(f"  {path} {name}: repeat {i + 1}/{repeats} {mode}", file=sys.stderr)
    return results


def measure_fresh(path: str, name: str, repeats: int) -> dict:
    """The first build and again in each mode of `path`, one fresh process per (repeat, mode):
    process CPU time, min and median, and what the modes are compared by."""
    modes = FRESH[path]
    results = fresh_processes(path, name, repeats)
    some = results[modes[1]][0]  # a recording mode's: what every recording mode has
    nodes = some["nodes"]
    row: dict = {"path": path, "model": name, "nodes": nodes, "recorded": some["recorded"],
                 "repeats": repeats, "clock": "process CPU time",
                 "torch_imports_s": statistics.median(r["imports_s"] for m in modes
                                                      for r in results[m])}
    if modes == MODES:  # torch's and callsite's stack traces, the same in every process
        digests = {m: {r["digest"] for r in results[m]} for m in modes}
        if len(digests["torch"]) != 1 or digests["torch"] != digests["callsite"]:
            raise SystemExit(f"{path} {name}: callsite's stack traces differ from torch's")
        row.update(frames=results["callsite"][0]["frames"], identical=True)
    elif path == "scoped":  # the frames each recording keeps
        row["frames"] = {m: results[m][0]["frames"] for m in modes[1:]}
    for run in RUNS:
        cpu, wall = ({m: [r[run][key] for r in results[m]] for m in modes}
                     for key in ("cpu_s", "wall_s"))
        row[run] = {"samples_cpu_s": cpu, "samples_wall_s": wall,
                    "noise": {m: noise(cpu[m]) for m in modes}}
        for stat, pick in STATS:
            row[run][stat] = figures(path, {m: pick(cpu[m]) for m in modes}, nodes)
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
    counted with --callgrind or --callgrind-only (the library's tracer: first, scoped)."""
    if args.callgrind_only and path == "first":
        row = {"path": path, "model": name}
    else:
        row = measure_fresh(path, name, args.repeats)
    if (args.callgrind or args.callgrind_only) and path in ("first", "scoped"):
        row["instructions"] = measure_instructions(path, name, args.keep_callgrind)
        row.setdefault("nodes", row["instructions"].get("nodes"))
    return row


# --- output ---------------------------------------------------------------------------------

def scoped_table(rows: list[dict]) -> tuple[list[str], list[list[str]]]:
    """The scoped rows: each model's first trace and again, min and median, per mode; the frames
    each recording keeps, and the instructions it adds when they were counted."""
    modes = FRESH["scoped"]
    counted = any("first" in r.get("instructions", {}) for r in rows)
    header = ["model (nodes; frames mean/max)", "trace", "stat", *(LABELS[m] for m in modes),
              *(f"{LABELS[m]} adds /node" for m in modes[1:]), "scoped / callsite's",
              *(f"Ir added /node ({LABELS[m]})" for m in modes[1:] if counted), "noise (max)"]
    lines = []
    for row in rows:
        kept = ", ".join(f"{m} {f['mean']:.1f}/{f['max']}" for m, f in row["frames"].items())
        for run in RUNS:
            ir = row.get("instructions", {}).get(run, {})
            for stat, _ in STATS:
                r = row[run][stat]
                lines.append([
                    f"{row['model']} ({row['nodes']}; {kept})", run, stat,
                    *(benchmark_tables.ms(r[f"{m}_s"]) + " ms" for m in modes),
                    *(f"{r[f'{m}_added_us_per_node']:.1f} µs" for m in modes[1:]),
                    fmt_ratio(r["scoped_vs_callsite"]),
                    *(f"{ir[f'{m}_added_ir_per_node']:,.0f}" for m in modes[1:] if counted),
                    fmt_noise(max(row[run]["noise"].values()))])
    return header, lines


def print_tables(result: dict, timed: bool) -> None:
    """The docs' tables of these rows (benchmark_tables.COLD_TABLES), as the page lays them out;
    torch-first only when the first-trace rows were `timed`."""
    for name, title in PRINTED.items():
        _, labels, compute = benchmark_tables.COLD_TABLES[name]
        header, lines = compute(result) if timed or name != "torch-first" else ([], [])
        if lines:
            print(f"\n{title}")
            print(_common.page_table((header, lines), labels))
    scoped = [row for row in result["rows"] if row["path"] == "scoped"]
    if scoped:
        print("\nThe scoped mode (callsite.torch.frames, every frame outside torch's files) "
              "beside callsite's default recording (deep models; process CPU time; Ir: "
              "callgrind, the measured trace alone)")
        print(_common.page_table(scoped_table(scoped), labels=3))


def main() -> None:
    children = {"--fresh-child": fresh_child, "--callgrind-child": callgrind_child}
    if sys.argv[1:2] and sys.argv[1] in children:  # a measured process the parent started
        print(json.dumps(children[sys.argv[1]](*sys.argv[2:])))
        return
    parser = _common.parser(__doc__.split("\n\n")[0], repeats=7)
    parser.add_argument("--paths", type=_common.names(tuple(FRESH)),
                        default="first,make_fx,export,compile")
    parser.add_argument("--callgrind", action="store_true",
                        help="the first and scoped paths also count instructions (valgrind)")
    parser.add_argument("--callgrind-only", action="store_true",
                        help="the first-trace path's instruction counts alone (no timing)")
    parser.add_argument("--keep-callgrind", metavar="DIR", type=_common.output_dir,
                        help="keep the callgrind files of --callgrind or --callgrind-only here "
                             "(created when missing)")
    parser.add_argument("--models", type=_common.names(tuple(deep_models.MODELS)),
                        help="comma-separated subset of: " + ", ".join(deep_models.MODELS))
    args = parser.parse_args()
    if args.keep_callgrind and not (args.callgrind or args.callgrind_only):
        parser.error("--keep-callgrind keeps the files of --callgrind or --callgrind-only, "
                     "neither of which is given")
    if args.repeats < 2:
        parser.error(f"--repeats: at least 2 (a min and a median per mode), got {args.repeats}")
    print(f"Python {platform.python_version()}, torch {torch.__version__}, "
          f"{platform.machine()} ({os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}); "
          f"min and median of {args.repeats} fresh processes per mode")
    rows = [fresh_row(path, name, args) for path in args.paths
            for name in args.models or deep_models.MODELS]
    result = {"torch": torch.__version__, "repeats": args.repeats, "rows": rows}
    if args.json:  # before the tables: a run of minutes is kept even if printing fails
        _common.write_results(args.json, "torch", result)
    print_tables(result, timed=not args.callgrind_only)


if __name__ == "__main__":
    main()
