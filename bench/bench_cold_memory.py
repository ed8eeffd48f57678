# bench/bench_cold_memory.py — what callsite's caches keep: RSS over 2,000 tracers and 1,000 Contexts.
"""Memory of the cold path's caches, each mode in a fresh process.

- **torch**: 2,000 ``fx.Tracer`` traces with ``record_stack_traces``, each of a model whose
  ``forward`` is in a file of its own (a new code object and a new source file per tracer, the
  worst case for caches keyed by stack), every tracer and graph dropped after its trace. Modes:
  no stack traces, torch's own, callsite's (``callsite.torch.accelerate()``).
- **MLIR**: 1,000 kernels, each built in a new ``ir.Context`` (what a DSL's JIT does per
  compile) and dropped. Modes: (a) no locations, (b) MLIR's ``loc_tracebacks()``, (c) the same
  switch served by callsite.

Reported per mode: the resident set (``VmRSS``) after the first unit of work and after the last,
its growth per unit, and what is still alive at the end (for MLIR the live Contexts, for torch
callsite's cached texts). linecache keeps every source file read, the same in every mode that
records stack traces; its size is reported beside the RSS.

    python bench/bench_cold_memory.py [--torch] [--mlir] [--tracers 2000] [--contexts 1000] [--json PATH]
"""
from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile

import _common  # this script's folder: options and the result file

TORCH_MODES = ("none", "torch", "callsite")
MLIR_MODES = ("a", "b", "c")

MODEL_SOURCE = '''\
import torch


class Model{index}(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 4)

    def forward(self, x):
        y = self.linear(x)
        y = torch.relu(y) + {index}
        return self.helper(y)

    def helper(self, y):
        return y * 2 - 1
'''


def rss_kib() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS in /proc/self/status")


def linecache_bytes() -> int:
    """The text of every file linecache keeps (its lazy entries, not read yet, have no lines)."""
    import linecache

    files = [entry[2] for entry in linecache.cache.values() if len(entry) == 4]
    return sum(len(line) for lines in files for line in lines)


def sample(samples: list, index: int, count: int) -> None:
    """The RSS after the first unit of work and after every eighth of them, garbage collected."""
    if index == 0 or (index + 1) % max(1, count // 8) == 0:
        gc.collect()
        samples.append((index + 1, rss_kib()))


def growth(samples: list) -> dict:
    (first_n, first), (last_n, last) = samples[0], samples[-1]
    per = (last - first) / max(1, last_n - first_n)
    return {"rss_first_kib": first, "rss_last_kib": last, "growth_kib": last - first,
            "growth_kib_per_unit": round(per, 3)}


def torch_child(mode: str, tracers: int) -> dict:
    import importlib.util

    import torch
    import torch.fx as fx

    if mode == "callsite":
        import callsite.torch

        callsite.torch.accelerate()
    folder = tempfile.mkdtemp(prefix="callsite-cold-memory-")
    samples = []
    for index in range(tracers):
        path = os.path.join(folder, f"model_{index}.py")
        with open(path, "w") as f:
            f.write(MODEL_SOURCE.format(index=index))
        spec = importlib.util.spec_from_file_location(f"cold_memory_model_{index}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        model = getattr(module, f"Model{index}")()
        tracer = fx.Tracer()
        tracer.record_stack_traces = mode != "none"
        graph = tracer.trace(model)
        if index == 0:
            recorded = sum(1 for n in graph.nodes
                           if n.stack_trace and n.op not in ("placeholder", "output"))
        del graph, tracer, model, module, spec
        sample(samples, index, tracers)
    cached = callsite.torch.status().get("cached_texts") if mode == "callsite" else None
    return {"mode": mode, "samples_kib": samples, "recorded_nodes_first": recorded,
            "linecache_bytes": linecache_bytes(), "callsite_cached_texts": cached,
            "growth": growth(samples)}


def mlir_child(mode: str, contexts: int) -> dict:
    import bench_mlir
    import callsite.mlir  # noqa: F401
    from iree.compiler import ir
    from iree.compiler.dialects import arith

    kernel = bench_mlir.cold_kernel(64)
    samples = []
    live = getattr(ir.Context, "_get_live_count", None)
    with bench_mlir.cold_mode(ir, mode):
        for index in range(contexts):
            bench_mlir.cold_build(ir, arith, kernel, None)  # and dropped
            sample(samples, index, contexts)
    gc.collect()
    return {"mode": mode, "samples_kib": samples,
            "live_contexts_at_end": live() if live is not None else None,
            "growth": growth(samples)}


def measure_modes(kind: str, modes: tuple[str, ...], count: int) -> list[dict]:
    """Each mode in a process of its own: the result its last line prints."""
    rows = []
    for mode in modes:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--child", kind, mode,
                              str(count)], check=True, capture_output=True, text=True).stdout
        rows.append(json.loads(out.strip().splitlines()[-1]))
    return rows


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, mode, count = sys.argv[2:5]
        child = torch_child if kind == "torch" else mlir_child
        print(json.dumps(child(mode, int(count))))
        return
    parser = _common.parser(__doc__.split("\n\n")[0])
    parser.add_argument("--torch", action="store_true", help="the tracers' part only")
    parser.add_argument("--mlir", action="store_true", help="the Contexts' part only")
    parser.add_argument("--tracers", type=int, default=2000)
    parser.add_argument("--contexts", type=int, default=1000)
    args = parser.parse_args()
    if args.tracers < 2 or args.contexts < 2:
        parser.error(f"--tracers and --contexts: expected at least 2, got {args.tracers} and "
                     f"{args.contexts}")
    both = not args.torch and not args.mlir
    results: dict = {}
    print(_common.environment_line())
    if args.torch or both:
        results["torch"] = {"tracers": args.tracers,
                            "modes": measure_modes("torch", TORCH_MODES, args.tracers)}
        print(f"\ntorch: {args.tracers} tracers, each of a model in a file of its own\n")
        print(_common.page_table(_common.page_tables().memory_table(results["torch"], "tracer")))
    if args.mlir or both:
        try:
            import iree.compiler.ir  # noqa: F401
        except ImportError as error:
            print(f"\nMLIR: skipped, iree's bindings are not installed ({error})")
        else:
            results["mlir"] = {"contexts": args.contexts,
                               "modes": measure_modes("mlir", MLIR_MODES, args.contexts)}
            print(f"\nMLIR: {args.contexts} kernels of 64 ops, a new Context each\n")
            print(_common.page_table(_common.page_tables().memory_table(results["mlir"], "Context")))
    if args.json:
        _common.write_results(args.json, "cold_memory", results)


if __name__ == "__main__":
    main()
