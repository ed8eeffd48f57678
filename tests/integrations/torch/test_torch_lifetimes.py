"""callsite.torch and the lives of tracers, nodes and source files: no finalizer that takes a
lock (a collection inside accelerate() finalizing a dead tracer), none that swallows a
KeyboardInterrupt, and no source file kept in memory after linecache let go of it. Each
scenario in a child process (accelerate() patches torch.fx process-wide)."""
import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from test_torch import run  # noqa: E402


def test_collection_while_torch_source_is_read():
    """A tracer that recorded under callsite and dies in a reference cycle is finalized by the
    collection that happens while accelerate() (then clear_caches(), decelerate()) reads
    torch's source: the child must finish, not wait for itself."""
    run("""
        import gc, linecache, torch.fx as fx, callsite.torch as ct, torch_models as tm
        def cyclic_trace():
            tracer = fx.Tracer(); tracer.record_stack_traces = True
            tracer.trace(tm.ConvNet())
            tracer.cycle = tracer  # freed only by a collection
        gc.disable()
        assert ct.accelerate()
        cyclic_trace()
        assert ct.decelerate()
        real = linecache.getlines
        def collecting(*args, **kwargs):
            gc.collect()  # the dead tracer's finalizers run here
            return real(*args, **kwargs)
        linecache.getlines = collecting
        assert ct.accelerate()  # reads torch's source through linecache
        linecache.getlines = real
        for switch in (ct.clear_caches, ct.decelerate, ct.accelerate):
            cyclic_trace()
            linecache.getlines = collecting
            switch()
            linecache.getlines = real
        print("finished")
    """, timeout=300)


def test_switching_while_another_thread_traces():
    """One thread switches callsite on and off and clears its caches while another traces
    with tracers that die in collections (as bench/bench_torch.py switches between builds):
    every text is torch's, and the child finishes."""
    run("""
        import gc, threading, torch.fx as fx, callsite.torch as ct, torch_models as tm
        model = tm.Transformer(1)
        def trace():
            tracer = fx.Tracer(); tracer.record_stack_traces = True
            graph = tracer.trace(model)
            tracer.cycle = tracer
            return [(n.name, n.stack_trace) for n in graph.nodes]
        theirs = trace()
        gc.set_threshold(20, 1, 1)  # collections everywhere, in callsite's locked regions too
        stop = threading.Event()
        def switch():
            while not stop.is_set():
                ct.accelerate(); ct.clear_caches(); ct.decelerate()
        switcher = threading.Thread(target=switch)
        switcher.start()
        try:
            for _ in range(40):
                assert trace() == theirs
        finally:
            stop.set()
            switcher.join()
        print("finished")
    """, timeout=300)


def test_keyboard_interrupt_not_swallowed_by_finalizers():
    """A KeyboardInterrupt arriving while a traced graph and its tracer are torn down, at the
    n-th Python call made then (every n in turn), reaches the program: callsite's finalizers
    run no Python code that could swallow it, so under callsite none is lost where torch's
    own path loses none."""
    result = run("""
        import gc, sys, _thread, torch.fx as fx, callsite.torch as ct, torch_models as tm
        model = tm.Transformer(1)
        swallowed = []
        sys.unraisablehook = lambda unraisable: swallowed.append(unraisable.exc_type)
        def teardown(n):
            tracer = fx.Tracer(); tracer.record_stack_traces = True
            graph = tracer.trace(model)
            calls = [0]
            def profile(frame, event, arg):
                if event == "call":
                    calls[0] += 1
                    if calls[0] == n:
                        sys.setprofile(None)
                        _thread.interrupt_main()
            try:
                sys.setprofile(profile)
                del tracer, graph
                gc.collect()
                sys.setprofile(None)
                for _ in range(100):  # the interrupt, if pending, is raised here at the latest
                    pass
            except KeyboardInterrupt:
                return "raised"
            finally:
                sys.setprofile(None)
            return "lost" if calls[0] >= n else "no call"
        def lost():
            count = 0
            for n in range(1, 400):
                outcome = teardown(n)
                if outcome == "no call":
                    return count, n - 1
                count += outcome == "lost"
            raise AssertionError("more than 400 Python calls in one teardown")
        torch_lost, torch_calls = lost()
        assert ct.accelerate()
        ours_lost, our_calls = lost()
        print(torch_lost, torch_calls, ours_lost, our_calls, len(swallowed))
        assert ours_lost <= torch_lost, (ours_lost, our_calls, torch_lost, torch_calls)
        assert swallowed.count(KeyboardInterrupt) == torch_lost + ours_lost, swallowed
    """, timeout=600)
    print(result.stdout)


def test_source_files_not_kept_after_linecache_lets_go(tmp_path):
    """Many model files traced once, deleted, and linecache cleared: what callsite keeps of
    them (texts, fingerprints of the files) grows memory by a bounded amount beside torch's
    own path, not by the files' lines."""
    result = run(f"""
        import gc, linecache, os, tracemalloc, torch.fx as fx, callsite.torch as ct
        directory = {str(tmp_path)!r}
        padding = "# " + "x" * 77 + "\\n" * 1  # 80 bytes a line
        def trace_files(count, tag):
            for i in range(count):
                path = os.path.join(directory, f"model_{{tag}}_{{i}}.py")
                with open(path, "w") as f:
                    f.write("import torch\\n"
                            "class M(torch.nn.Module):\\n"
                            "    def forward(self, x):\\n"
                            f"        return torch.relu(x) + {{i}}\\n")
                    f.write(padding * 1000)  # 80 kB a file
                namespace = {{}}
                with open(path) as f:
                    exec(compile(f.read(), path, "exec"), namespace)
                tracer = fx.Tracer(); tracer.record_stack_traces = True
                graph = tracer.trace(namespace["M"]())
                assert any(path in (n.stack_trace or "") for n in graph.nodes)
                os.remove(path)
            linecache.clearcache()
            gc.collect()
        def growth(accelerated, tag):
            ct.accelerate() if accelerated else ct.decelerate()
            trace_files(3, tag + "warm")  # torch's first imports and caches
            before = tracemalloc.get_traced_memory()[0]
            trace_files(300, tag)  # 24 MB of source
            return tracemalloc.get_traced_memory()[0] - before
        tracemalloc.start()
        torch_growth = growth(False, "torch")
        ours = growth(True, "callsite")
        print(torch_growth >> 20, ours >> 20)
        assert ours < torch_growth + (16 << 20), (ours, torch_growth)
    """, timeout=600)
    print(result.stdout)
