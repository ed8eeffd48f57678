"""callsite.torch: every node's stack_trace byte-identical to torch's own, each scenario in a
child process (accelerate() patches torch.fx process-wide)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from where import REPO, SUPPORT  # noqa: E402

HERE = str(SUPPORT)  # torch_models
SCENARIOS = ["transformer", "transformer_forward_only", "conv", "own_filter",
             "anchor_forward_only", "make_fx", "make_fx_conv", "export"]


def run(code, timeout=600, script=None, **env):
    """Runs `code` in a child Python with this folder (torch_models) importable; the caller's
    PYTHONPATH (a development build's package) comes after it. script: a file to write the code
    to and run (its frames then have a file and source lines), instead of ``-c``."""
    path = os.pathsep.join(p for p in (HERE, os.environ.get("PYTHONPATH")) if p)
    environment = {**os.environ, "PYTHONPATH": path, **env}
    environment.pop("CALLSITE_TORCH", None) if "CALLSITE_TORCH" not in env else None
    code = textwrap.dedent(code)
    if script is not None:
        with open(script, "w") as f:
            f.write(code)
    command = [str(script)] if script is not None else ["-c", code]
    result = subprocess.run([sys.executable, *command], env=environment,
                            capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stdout + result.stderr
    return result


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_identical_stack_traces(scenario):
    result = run(f"""
        import torch, torch_models as tm, callsite.torch as ct
        scenarios = tm.scenarios()
        if {scenario!r} == "export":
            model, x = tm.Transformer(2), torch.randn(2, 5, 16)
            def trace():
                ep = torch.export.export(model, (x,))
                return [(n.name, n.meta.get("stack_trace")) for n in ep.graph.nodes]
        else:
            trace = scenarios[{scenario!r}]
        theirs = trace()
        assert ct.accelerate()
        ours = trace()
        again = trace()
        assert len(theirs) == len(ours) > 3
        recorded = [t for _, t in theirs if t]
        assert recorded, "torch recorded no stack trace: nothing compared"
        for mine, torch_own in zip(ours, theirs):
            assert mine == torch_own, (mine, torch_own)
        assert again == theirs
        print(len(theirs), len(recorded))
    """)
    assert result.stdout.split()[0].isdigit()


def test_traceback_of_is_the_raw_capture():
    run("""
        import torch_models as tm, callsite, callsite.torch as ct, torch.fx as fx
        model = tm.Transformer(2)
        assert ct.accelerate()
        tracer = fx.Tracer(); tracer.record_stack_traces = True
        graph = tracer.trace(model)
        calls = [n for n in graph.nodes if n.op == "call_module"]
        tb = ct.traceback_of(calls[0])
        assert isinstance(tb, callsite.Traceback)
        assert tb[0].name == "create_node"
        assert any(f.name == "forward" and f.filename == tm.__file__ for f in tb)
        lines = [f.lineno for f in tb if f.filename == tm.__file__]
        assert str(lines[0]) in calls[0].stack_trace
        plain = fx.Graph().placeholder("x")  # built outside any tracer: nothing captured
        assert ct.traceback_of(plain) is None
        for wrong in (object(), 3, None):
            try:
                ct.traceback_of(wrong)
            except TypeError as error:
                message = str(error)
                assert "node" in message and "torch.fx.Node" in message, message
                assert type(wrong).__qualname__ in message, message
            else:
                raise AssertionError(f"traceback_of({wrong!r}) did not raise")
    """)


def test_threads_tracing_at_once():
    run("""
        import torch_models as tm, callsite.torch as ct
        models = [tm.Transformer(3) for _ in range(4)]
        theirs = [tm.fx_traces(m) for m in models]
        assert ct.accelerate()
        import threading
        out = [None] * 4
        # fx's symbolic tracing patches globals (torch.fx._symbolic_trace's patcher): torch
        # itself fails when two threads trace at once, so the traces take turns while the
        # threads share callsite's caches.
        lock = threading.Lock()
        def work(i):
            for _ in range(3):
                with lock:
                    out[i] = tm.fx_traces(models[i])
        ts = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        [t.start() for t in ts]; [t.join() for t in ts]
        assert out == theirs
    """)


def test_threads_building_nodes_at_once():
    run("""
        import threading, torch_models as tm, callsite.torch as ct
        theirs = tm.built_node_traces()
        assert len(set(theirs)) == 3 and all(theirs), theirs
        assert ct.accelerate()
        threads, rounds = 4, 20
        barrier = threading.Barrier(threads)
        out = [[] for _ in range(threads)]
        def work(i):
            barrier.wait()  # all threads record through callsite's shared caches at once
            for _ in range(rounds):
                out[i].append(tm.built_node_traces())
        workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
        [w.start() for w in workers]; [w.join() for w in workers]
        assert all(len(o) == rounds for o in out)
        assert all(traces == theirs for o in out for traces in o)
    """)


def test_doctor_says_whether_torch_is_served():
    code = """
        import json, sys, callsite
        if sys.argv[1:] == ["import"]:
            import torch.fx
        print(json.dumps(callsite.doctor()["torch"]))
    """
    def report(*args, **env):
        environment = {**os.environ, **env}
        environment.pop("PYTHONPATH", None)
        if "CALLSITE_TORCH" not in env:
            environment.pop("CALLSITE_TORCH", None)
        result = subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                                env=environment, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, result.stderr
        return json.loads(result.stdout.splitlines()[-1])
    off = report()
    assert off["status"].startswith("off") and not off["accelerated"]
    assert off["torch"].endswith("(installed, not imported)"), off["torch"]  # nothing imported it
    waiting = report(CALLSITE_TORCH="1")
    assert waiting["waiting_for_torch_fx"] and not waiting["accelerated"]
    assert waiting["status"].startswith("on once torch.fx is imported")
    on = report("import", CALLSITE_TORCH="1")
    assert on["accelerated"] and on["status"].startswith("on:") and not on["waiting_for_torch_fx"]
    assert report(CALLSITE_TORCH=" Yes ")["waiting_for_torch_fx"]  # every switch's words
    bad = report(CALLSITE_TORCH="banana")
    assert "CALLSITE_TORCH" in bad["status"] and "'banana'" in bad["status"]
    assert not bad["accelerated"]


def test_no_code_objects_left():
    run("""
        import gc, sys, types, weakref, textwrap, torch, torch.fx as fx, callsite.torch as ct
        assert ct.accelerate()
        source = textwrap.dedent('''
            import torch
            class Mod(torch.nn.Module):
                def forward(self, x):
                    return torch.relu(x) + 1
        ''')
        module = types.ModuleType("gen_model")
        exec(compile(source, "/tmp/gen_model.py", "exec"), module.__dict__)
        code_ref = weakref.ref(module.Mod.forward.__code__)
        tracer = fx.Tracer(); tracer.record_stack_traces = True
        graph = tracer.trace(module.Mod())
        assert any(n.stack_trace for n in graph.nodes)
        del tracer, graph, module
        gc.collect()
        assert code_ref() is None, gc.get_referrers(code_ref())
        assert ct.status()["cached_texts"] > 0  # the texts outlive the code, as strings
        ct.clear_caches()
        assert ct.status()["cached_texts"] == 0
    """)


def test_texts_kept_across_tracers_follow_the_source(tmp_path):
    """Texts outlive tracers as strings; one whose file linecache reads anew (changed on disk,
    linecache.checkcache) is made again, as torch's own walk reads the new line."""
    run(f"""
        import importlib, linecache, os, sys, time, torch.fx as fx, callsite.torch as ct
        sys.path.insert(0, {str(tmp_path)!r})
        path = os.path.join({str(tmp_path)!r}, "edited_model.py")
        def write(expression, stamp):
            with open(path, "w") as f:
                f.write("import torch\\n"
                        "class Mod(torch.nn.Module):\\n"
                        "    def forward(self, x):\\n"
                        f"        return {{expression}}\\n")
            os.utime(path, (stamp, stamp))
        def traces(accelerated):
            ct.accelerate() if accelerated else ct.decelerate()
            tracer = fx.Tracer(); tracer.record_stack_traces = True
            return [n.stack_trace for n in tracer.trace(module.Mod()).nodes]
        write("torch.relu(x) + 1", time.time() - 100)
        import edited_model as module
        before = traces(False)
        assert traces(True) == before and traces(True) == before  # a second tracer: kept texts
        assert any("torch.relu(x) + 1" in (t or "") for t in before), before
        write("torch.relu(x) + 2", time.time())  # same lines and code, another text on disk
        linecache.checkcache(path)
        after = traces(False)
        assert after != before and any("torch.relu(x) + 2" in (t or "") for t in after), after
        assert traces(True) == after
    """)


def test_switch_off_leaves_torch_untouched():
    run("""
        import sys, torch.fx.proxy as proxy
        assert "callsite" not in sys.modules and "callsite.torch" not in sys.modules
        assert proxy.TracerBase.create_node.__code__.co_filename == proxy.__file__
        assert not hasattr(proxy.TracerBase.create_node, "__wrapped__")
    """, CALLSITE_TORCH="0")


def test_switch_on_serves_torch_without_a_code_change():
    run("""
        import sys
        assert "callsite" not in sys.modules
        assert "callsite.torch._detect" in sys.modules
        import torch_models as tm
        import callsite.torch as ct
        assert ct.is_accelerated()
        model = tm.Transformer(2)
        ours = tm.fx_traces(model)
        assert all(ct.traceback_of(node) is not None for node in tm.fx_graph(model).nodes)
        assert ct.decelerate()
        theirs = tm.fx_traces(model)
        assert sum(1 for _, text in theirs if text) > 3, "torch recorded no stack trace"
        assert ours == theirs
    """, CALLSITE_TORCH="1")


def test_switch_bad_value_names_the_variable():
    result = run("import sys; print('ran')", CALLSITE_TORCH="banana")
    assert "ran" in result.stdout
    assert "CALLSITE_TORCH" in result.stderr and "'banana'" in result.stderr


def test_switch_bad_value_reported_once_when_the_hook_runs_twice(tmp_path):
    """A venv's site-packages can be processed twice (seen under two paths, lib and a lib64
    link to it), which runs callsite's .pth twice: the bad value is reported once."""
    startup = os.path.join(str(REPO), "python", "startup")
    site_dir = tmp_path / "site-packages"
    site_dir.mkdir()
    for name in ("callsite.pth", "_callsite_startup.py"):
        (site_dir / name).write_text(open(os.path.join(startup, name)).read())
    alias = tmp_path / "lib64"
    alias.symlink_to(site_dir)
    result = run(f"""
        import site
        site.addsitedir({str(site_dir)!r})
        site.addsitedir({str(alias)!r})
        print("ran")
    """, CALLSITE_TORCH="banana")
    assert "ran" in result.stdout
    reports = [line for line in result.stderr.splitlines() if "CALLSITE_TORCH" in line]
    assert len(reports) == 1, result.stderr
    assert "'banana'" in result.stderr


def test_unrecognised_torch_warns_and_keeps_torch():
    run("""
        import warnings, torch.fx.proxy as proxy, callsite.torch as ct, torch_models as tm
        original = proxy.TracerBase._filter_traceback_frames
        def changed(self, summary):
            return original(self, summary)
        proxy.TracerBase._filter_traceback_frames = changed
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            assert not ct.accelerate()
        assert any(issubclass(w.category, ct.TorchWarning) for w in caught)
        assert proxy.TracerBase.create_node.__code__.co_filename == proxy.__file__
        assert not hasattr(proxy.TracerBase.create_node, "__wrapped__")
        assert ct.status()["refusal"]
    """)
