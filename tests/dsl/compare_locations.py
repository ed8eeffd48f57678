"""Run as a script in its own process: builds one DSL design twice, first with the bindings'
own ``ir.loc_tracebacks()`` (MLIR's walk), then with the same switch after
``callsite.mlir.accelerate()``, and prints a JSON report of the op locations.

    python compare_locations.py <design module name>

The design module (a file beside this one) defines ``IR`` (the bindings' ``ir`` module),
``USER_FILES`` (the files whose lines are the user's) and ``build()`` -> ``(op.name, str(op.location))`` of
every op of the design, in order, read while the DSL's context is alive; optionally
``UNLOCATED`` (op names the DSL itself builds with an explicit unknown location) and
``register_rules()`` (the same file rules for both runs).
"""
from __future__ import annotations

import gc
import importlib
import json
import os
import sys


def locations(design) -> list[str]:
    return design.build()


def user_code_objects(design) -> list:
    """Every code object of the design's functions (methods, nested functions, lambdas)."""
    found: dict[int, object] = {}

    def add(code):
        if code.co_filename == design.__file__ and id(code) not in found:
            found[id(code)] = code
            for const in code.co_consts:
                if hasattr(const, "co_filename"):
                    add(const)

    def visit(namespace, depth=0):
        for value in list(namespace.values()):
            value = getattr(value, "__wrapped__", value)
            for candidate in (value, getattr(value, "__func__", None), getattr(value, "func", None)):
                code = getattr(candidate, "__code__", None)
                if code is not None:
                    add(code)
            if isinstance(value, type) and depth < 2 and value.__module__ == design.__name__:
                visit(dict(vars(value)), depth + 1)

    visit(vars(design))
    return list(found.values())


def code_refcounts(design) -> dict[str, int]:
    codes = user_code_objects(design)
    gc.collect()
    return {f"{c.co_filename}:{c.co_qualname if hasattr(c, 'co_qualname') else c.co_name}":
            sys.getrefcount(c) for c in codes}


def main() -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    try:
        design = importlib.import_module(sys.argv[1])
    except ImportError as error:  # an older release of the DSL than the design is written for
        print(json.dumps({"skip": f"{sys.argv[1]} does not import here: {error}"}))
        return
    ir = design.IR
    if not hasattr(ir, "loc_tracebacks"):
        print(json.dumps({"skip": f"{ir.__name__} has no loc_tracebacks() (older MLIR)"}))
        return
    report: dict = {"python": sys.version.split()[0]}
    rules = getattr(design, "register_rules", lambda: None)

    actions = dict(max_depth=design.LIMIT, on_explicit_actn=getattr(
        ir.OnExplicitAction, getattr(design, "ON_EXPLICIT", "use_explicit").upper()))
    runs = []
    for phase in ("mlir", "callsite"):
        if phase == "callsite":
            import callsite.mlir

            callsite.mlir.accelerate(ir)
            before = code_refcounts(design)
        rules()  # MLIR has no getter for rules registered before acceleration: again after it
        with ir.loc_tracebacks(**actions):
            runs.append(locations(design))  # one call site for both runs
    mlir_own, ours = runs
    callsite.mlir.clear_caches()
    after = code_refcounts(design)
    report["mlir_records_frames"] = any(loc != "loc(unknown)" for _, loc in mlir_own)

    report["ops"] = len(ours)
    same_ops = [a[0] for a in mlir_own] == [b[0] for b in ours]
    report["identical"] = sum(a == b for a, b in zip(mlir_own, ours)) if same_ops else 0
    report["different"] = [[a, b] for a, b in zip(mlir_own, ours) if a != b][:5]
    unlocated = getattr(design, "UNLOCATED", set())
    user_ops = [loc for name, loc in ours if name not in unlocated]
    report["user_ops"] = len(user_ops)
    report["without_user_line"] = [l for l in user_ops if not any(f in l for f in design.USER_FILES)][:5]
    report["unknown"] = sum(loc == "loc(unknown)" for _, loc in ours)
    report["code_ref_delta"] = {k: after[k] - before[k] for k in before if after[k] != before[k]}
    print(json.dumps(report))


if __name__ == "__main__":
    main()
