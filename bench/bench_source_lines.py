# bench/bench_source_lines.py — instructions to read source files: linecache vs callsite's reader.
"""Counts the instructions (callgrind) of reading real source files through
`linecache.getlines` and through callsite's native reader (`_callsite._source_lines`, which
gives the same lines and fills `linecache.cache` the same way).

    PYTHONPATH=build/<dir>/pkg python bench/bench_source_lines.py [--files 50] [--json PATH]

Files: half from the running Python's standard library, half from torch's `fx` and `nn/modules`
when torch is installed (found without importing it), otherwise all from the standard library;
the list is fixed (sorted, evenly spaced) so runs compare. Each configuration runs twice in a
fresh process under callgrind and the difference is the cost measured, so start-up and imports
cancel exactly (`tokenize`, which linecache imports on its first read, is imported beforehand);
the process leaves with os._exit, so freeing the lines at exit, the same for both, is not
counted:

- cold: reading `files` files for the first time (an empty cache), Ir per file =
  (Ir(all files) − Ir(no file)) / files;
- hit: the files already cached, Ir per lookup = (Ir(N2 lookups) − Ir(N1 lookups)) / (N2 − N1),
  the loop included; `hit-loop` is the same loop calling `len` instead, to subtract.
"""
from __future__ import annotations

import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # for _common and callgrind_capture (bench only)

READERS = ("linecache", "native")


def spaced(paths: list[str], k: int) -> list[str]:
    paths = sorted(paths)
    if len(paths) <= k:
        return paths
    return [paths[i * len(paths) // k] for i in range(k)]


def py_files(root: str, subdirs: tuple[str, ...] = ("",)) -> list[str]:
    out = []
    for sub in subdirs:
        folder = os.path.join(root, sub)
        if os.path.isdir(folder):
            out += [os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".py")]
    # Files linecache gives no lines for (empty) say nothing about reading.
    return [f for f in out if os.path.getsize(f) > 0]


def choose_files(count: int) -> tuple[list[str], dict]:
    stdlib = py_files(os.path.dirname(os.__file__))
    spec = importlib.util.find_spec("torch")
    torch_files = []
    if spec and spec.origin:
        torch_files = py_files(os.path.dirname(spec.origin), ("fx", os.path.join("nn", "modules")))
    n_torch = count // 2 if torch_files else 0
    files = spaced(stdlib, count - n_torch) + spaced(torch_files, n_torch)
    sizes = [os.path.getsize(f) for f in files]
    return files, {"files": len(files), "from_torch": n_torch, "bytes": sum(sizes)}


def child(config: str, list_file: str, n: int) -> int:
    import gc
    import linecache
    import tokenize  # noqa: F401  imported by linecache's first read: not part of what is measured

    from callsite import _callsite

    with open(list_file) as f:
        files = json.load(f)
    reader, _, mode = config.partition("-")
    read = linecache.getlines if reader == "linecache" else _callsite._source_lines
    gc.disable()
    linecache.clearcache()
    if mode == "cold":
        for name in files[:n]:
            read(name)
    else:
        for name in files:
            read(name)
        if reader == "hit":  # the loop alone: "hit-loop"
            read = len
        k = len(files)
        for i in range(n):
            read(files[i % k])
    # Both readers' lines are freed alike at exit: leaving without finalizing keeps the
    # difference to what reading costs.
    sys.stdout.flush()
    os._exit(0)


def run(out_file: str, config: str, list_file: str, n: int) -> int:
    from callgrind_capture import callgrind_child
    return callgrind_child(out_file, __file__, [config, list_file, str(n)])


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--child":
        return child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    from _common import count, environment_line, output_dir, parser, write_results

    p = parser(__doc__.splitlines()[0])
    p.add_argument("--files", type=count, default=50)
    p.add_argument("--n1", type=count, default=1000, help="hit: lookups of the first run")
    p.add_argument("--n2", type=count, default=11000, help="hit: lookups of the second run")
    p.add_argument("--out", default=None, type=output_dir,
                   help="directory for the callgrind.out files (created when missing)")
    args = p.parse_args()
    out = args.out or os.path.join(HERE, "..", "build", "callgrind",
                                   f"py{sys.version_info[0]}{sys.version_info[1]}")
    os.makedirs(out, exist_ok=True)
    files, about = choose_files(args.files)
    list_file = os.path.join(out, "source-lines-files.json")
    with open(list_file, "w") as f:
        json.dump(files, f)
    print(f"# source lines: linecache.getlines vs callsite's reader — {environment_line()}")
    print(f"{about['files']} files ({about['from_torch']} from torch), {about['bytes']} bytes; "
          "callgrind Ir, differences of two runs\n")
    results = {}
    for config, (n1, n2), per in (
        [(f"{r}-cold", (0, len(files)), len(files)) for r in READERS]
        + [(f"{r}-hit", (args.n1, args.n2), args.n2 - args.n1) for r in READERS + ("hit",)]
    ):
        name = "hit-loop" if config == "hit-hit" else config
        t1, t2 = (run(os.path.join(out, f"source-lines-{name}-n{n}.out"), config, list_file, n)
                  for n in (n1, n2))
        results[name] = (t2 - t1) / per
        print(f"  {name}: {results[name]:,.1f} Ir", flush=True)
    cold = results["linecache-cold"] / results["native-cold"]
    loop = results["hit-loop"]
    hit = (results["linecache-hit"] - loop) / max(results["native-hit"] - loop, 1e-9)
    print("\n| path | linecache.getlines | native | ratio |\n|---|---:|---:|---:|")
    print(f"| first read, Ir per file | {results['linecache-cold']:,.0f} | "
          f"{results['native-cold']:,.0f} | {cold:.1f}× |")
    print(f"| cached, Ir per lookup (loop of {loop:,.1f} subtracted) | "
          f"{results['linecache-hit'] - loop:,.1f} | {results['native-hit'] - loop:,.1f} | "
          f"{hit:.1f}× |")
    if args.json:
        write_results(args.json, "source_lines", {
            "python": sys.version.split()[0], **about, "n1": args.n1, "n2": args.n2,
            "ir": results, "ratio_cold": cold, "ratio_hit": hit})
    return 0


if __name__ == "__main__":
    sys.exit(main())
