"""callsite.mlir.accelerate(), CALLSITE_MLIR=1, finding the bindings and callsite's own
process-wide knobs. Each case runs in a fresh interpreter: acceleration is process-wide."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

import mlir_support as H


def run_python(source: str, env_extra=None, cwd=None) -> dict:
    env = dict(os.environ)
    env.pop("CALLSITE_MLIR", None)
    env.update(env_extra or {})
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(source)], capture_output=True,
                          text=True, env=env, cwd=cwd or "/", timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(params=H.CANDIDATES)
def ir_name(request):
    ir = H.import_ir(request.param)  # skips when unavailable
    if not hasattr(ir, "loc_tracebacks"):
        pytest.skip(f"{request.param} has no loc_tracebacks() (older MLIR): no switch to serve")
    return request.param


# Builds ops under each MLIR switch from one call site; run before and after accelerate().
SWITCHES = '''
import gc, json, os, sys
import {ir_name} as ir
from {native} import globals as G

def make(tag):
    return ir.Operation.create("test." + tag)

def helper(tag):
    return make(tag)

def build_all(collect):
    with ir.Context() as ctx, ir.Location.unknown():
        ctx.allow_unregistered_dialects = True
        collect.append(str(make("off").location))
        G.set_loc_tracebacks_enabled(True)
        collect.append(str(helper("on").location))
        G.set_loc_tracebacks_frame_limit(1)
        collect.append(str(helper("limit1").location))
        G.set_loc_tracebacks_frame_limit(10)
        G.register_traceback_file_exclusion(__file__)
        collect.append(str(helper("excluded").location))
        G.register_traceback_file_inclusion(__file__)
        collect.append(str(helper("included").location))
        explicit = ir.Location.file("explicit.py", 3, 1)
        collect.append(str(ir.Operation.create("test.x", loc=explicit).location))
        if hasattr(G, "set_traceback_action_on_explicit_loc"):
            G.set_traceback_action_on_explicit_loc(1)
            collect.append(str(ir.Operation.create("test.y", loc=explicit).location))
            G.set_traceback_action_on_explicit_loc(0)
        if hasattr(G, "set_traceback_action_on_current_loc"):
            G.set_traceback_action_on_current_loc(1)
            with ir.Location.name("Task", childLoc=ir.Location.unknown()):
                collect.append(str(helper("wrapped").location))
            G.set_traceback_action_on_current_loc(0)
        collect.append(str(ir.Module.create().operation.location))
        with ir.loc_tracebacks(max_depth=2):
            collect.append(str(helper("scoped").location))
        G.set_loc_tracebacks_enabled(False)
        collect.append(str(helper("off-again").location))
        state = [G.loc_tracebacks_enabled(), G.loc_tracebacks_frame_limit()]
    return state

def code_refs():
    gc.collect()
    return sys.getrefcount(make.__code__) + sys.getrefcount(helper.__code__)

runs = []
for phase in ("mlir", "callsite"):
    if phase == "callsite":
        import callsite.mlir
        accelerated = [b.ir.__name__ for b in callsite.mlir.accelerate()]
    out = []
    state = build_all(out)  # one call site for both runs
    runs.append(out)
    if phase == "callsite":
        before = code_refs()
        with ir.Context() as ctx, ir.Location.unknown(), ir.loc_tracebacks():
            ctx.allow_unregistered_dialects = True
            for _ in range(200):
                helper("many")
        callsite.mlir.clear_caches()
        leaked = code_refs() - before
print(json.dumps(dict(mlir=runs[0], ours=runs[1], state=state, accelerated=accelerated,
                      leaked=leaked)))
'''


def native_of(ir_name):
    return ir_name.rpartition(".")[0] + "._mlir_libs._mlir"


def test_accelerate_serves_mlirs_switches(ir_name, tmp_path):
    script = tmp_path / "switches.py"
    script.write_text(SWITCHES.format(ir_name=ir_name, native=native_of(ir_name)))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         cwd=str(tmp_path), timeout=120, env={**os.environ, "CALLSITE_MLIR": "0"})
    assert out.returncode == 0, out.stderr[-3000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["accelerated"] == [ir_name]
    assert report["state"] == [False, 10]
    ours, mlir = report["ours"], report["mlir"]
    assert ours[0] == "loc(unknown)" and ours[-1] == "loc(unknown)"
    assert "switches.py" in ours[1] and ours[1].count(" at ") >= 2
    assert ours[2].startswith('loc("make"(') and " at " not in ours[2]      # limit 1
    assert "switches.py" not in ours[3]                                    # excluded
    assert "switches.py" in ours[4]                                        # included again
    assert report["leaked"] == 0  # MLIR's own walk (which leaks a reference a frame) never ran
    if not any("switches.py" in l for l in mlir):
        return  # MLIR's own walk records nothing here (stable-ABI wheel); the checks above hold
    assert ours == mlir


def test_callsite_mlir_env_accelerates_any_process(ir_name, tmp_path):
    prog = tmp_path / "user_program.py"
    prog.write_text(textwrap.dedent(f'''
        import json, sys
        before = sorted(m for m in sys.modules if m.startswith("callsite"))
        import {ir_name} as ir
        after = "callsite.mlir" in sys.modules
        def kernel():
            return ir.Operation.create("test.op")
        with ir.Context() as ctx, ir.Location.unknown(), ir.loc_tracebacks():
            ctx.allow_unregistered_dialects = True
            text = str(kernel().location)
        print(json.dumps(dict(before=before, after=after, text=text)))
    '''))
    results = {}
    for value in ("1", "0"):
        out = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                             cwd=str(tmp_path), timeout=120, env={**os.environ, "CALLSITE_MLIR": value})
        assert out.returncode == 0, out.stderr[-3000:]
        results[value] = json.loads(out.stdout.strip().splitlines()[-1])
    on, off = results["1"], results["0"]
    # Nothing heavy at start-up: only the import watcher, not the package or its extension.
    assert on["before"] == ["callsite._import_watch", "callsite._switches",
                            "callsite.mlir._detect"]
    assert off["before"] == ["callsite._switches"]  # the table is read when a switch is set
    assert on["after"] and not off["after"]
    assert '"kernel"(' in on["text"] and "user_program.py" in on["text"]
    if off["text"] != "loc(unknown)":  # MLIR's own walk records frames here
        assert on["text"] == off["text"]


def test_detection_imports_nothing_and_says_what_to_do():
    report = run_python('''
        import json, sys
        import callsite.mlir
        try:
            with callsite.mlir.auto_locations():
                pass
            error = None
        except ImportError as e:
            error = str(e)
        loaded = [m for m in ("iree", "jaxlib", "mlir", "pycde", "circt", "cutlass")
                  if m in sys.modules]
        print(json.dumps(dict(error=error, loaded=loaded)))
    ''')
    assert report["loaded"] == []
    assert "no MLIR Python bindings are imported" in report["error"]
    assert "pass ir=" in report["error"] and "jaxlib.mlir.ir" in report["error"]


def test_detection_is_structural(ir_name):
    report = run_python(f'''
        import json, sys, types
        import {ir_name} as real
        from callsite.mlir import _detect as D
        alias = types.ModuleType("some_dsl.ir")      # a name no list knows
        alias.__dict__.update(vars(real))
        sys.modules["some_dsl.ir"] = alias
        fake = types.ModuleType("fake.ir")            # the right names, not MLIR's classes
        for name in ("Context", "Location", "Operation", "OpView", "Module"):
            setattr(fake, name, type(name, (), {{}}))
        sys.modules["fake.ir"] = fake
        found = [m.__name__ for m in D.loaded_ir_modules()]
        print(json.dumps(dict(found=found, alias=D.is_mlir_ir(alias), fake=D.is_mlir_ir(fake))))
    ''')
    assert report["alias"] and not report["fake"]
    # One entry per set of bindings (the alias shares its classes): the public module first.
    assert report["found"] == [ir_name]


def test_bindings_imported_inside_a_scope_join_it():
    names = [n for n in H.CANDIDATES if n != "mlir.ir"]
    for n in names:
        H.import_ir(n)
    if len(names) < 2:
        pytest.skip("needs two distributions of the bindings (iree and jaxlib)")
    first, second = names[:2]
    report = run_python(f'''
        import json
        import {first}
        import callsite.mlir
        with callsite.mlir.auto_locations():
            import {second} as ir
            def kernel():
                return ir.Operation.create("test.op")
            with ir.Context() as ctx, ir.Location.unknown():
                ctx.allow_unregistered_dialects = True
                inside = str(kernel().location)
        with ir.Context() as ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            outside = str(kernel().location)
        print(json.dumps(dict(inside=inside, outside=outside)))
    ''')
    assert '"kernel"(' in report["inside"]
    assert report["outside"] == "loc(unknown)"


def test_process_knobs_and_scopes_winning(ir_name):
    report = run_python(f'''
        import json
        import {ir_name} as ir
        import callsite.mlir as cm
        def leaf():
            return str(ir.Operation.create("test.op", loc=ir.Location.file("e.py", 1, 1)).location)
        def mid():
            return leaf()
        def top():
            return mid()
        out = {{}}
        with ir.Context() as ctx, ir.Location.unknown():
            ctx.allow_unregistered_dialects = True
            cm.set_loc_tracebacks_frame_limit(2)
            cm.set_traceback_action_on_explicit_loc("use_traceback")
            with cm.auto_locations(cm.Filter.default(), limit=cm.loc_tracebacks_frame_limit()):
                out["process"] = top()
            with cm.loc_tracebacks():  # MLIR's drop-in: its actions are its own (defaults)
                out["dropin"] = top()
            with cm.loc_tracebacks(max_depth=1, on_explicit="use_explicit"):
                out["scoped"] = top()
            with cm.auto_locations(limit=3):  # the process action, the scope's limit
                out["scope"] = top()
                with cm.loc_tracebacks(on_explicit="use_traceback"):  # keeps the enclosing limit
                    out["nested"] = top()
            out["limit"] = cm.loc_tracebacks_frame_limit()
            out["action"] = cm.traceback_action_on_explicit_loc()
            cm.set_loc_tracebacks_frame_limit(100000)
            out["clamped"] = cm.loc_tracebacks_frame_limit()
            errors = []
            for bad in (lambda: cm.set_loc_tracebacks_frame_limit(-1),
                        lambda: cm.set_loc_tracebacks_frame_limit("3"),
                        lambda: cm.set_traceback_action_on_explicit_loc("bogus"),
                        lambda: cm.set_loc_tracebacks_enabled(True)):
                try:
                    bad()
                except (TypeError, ValueError, RuntimeError) as e:
                    errors.append(type(e).__name__ + ": " + str(e))
            out["errors"] = errors
        print(json.dumps(out))
    ''')
    assert report["process"].count(" at ") == 1 and '"leaf"(' in report["process"]
    assert report["scoped"] == report["dropin"] == 'loc("e.py":1:1)'
    assert report["scope"].count(" at ") == 2 and report["nested"] == report["scope"]
    assert report["limit"] == 2 and report["action"] == "use_traceback"
    assert report["clamped"] == 512
    kinds = [e.split(":")[0] for e in report["errors"]]
    assert kinds == ["ValueError", "TypeError", "ValueError", "RuntimeError"], report["errors"]
    assert "limit" in report["errors"][0] and "accelerate" in report["errors"][3]


def test_decelerate_gives_mlir_its_switches_back(ir_name):
    report = run_python(f'''
        import json
        import {ir_name} as ir
        from {native_of(ir_name)} import globals as G
        import callsite.mlir as cm
        original = (type(G).__dict__["set_loc_tracebacks_enabled"], ir.loc_tracebacks)
        cm.accelerate(ir)
        swapped = type(G).__dict__["set_loc_tracebacks_enabled"] is not original[0]
        G.set_loc_tracebacks_enabled(True)
        cm.decelerate(ir)
        restored = (type(G).__dict__["set_loc_tracebacks_enabled"] is original[0]
                    and ir.loc_tracebacks is original[1])
        print(json.dumps(dict(swapped=swapped, restored=restored,
                              still_on=G.loc_tracebacks_enabled(),
                              installed=cm.use(ir).installed,
                              settings=cm.use(ir).process_settings is None)))
    ''')
    assert report == dict(swapped=True, restored=True, still_on=True, installed=False,
                          settings=True)


def test_a_failing_listener_never_breaks_the_programs_import(ir_name):
    report = run_python(f'''
        import json, warnings
        from callsite.mlir import _detect as D
        def broken(module):
            raise RuntimeError("boom")
        D.watch_imports(broken)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import {ir_name} as ir
        print(json.dumps(dict(imported=ir.__name__, warned=[str(w.message) for w in caught])))
    ''')
    assert report["imported"] == ir_name
    assert any("not attached" in w and "boom" in w for w in report["warned"]), report
