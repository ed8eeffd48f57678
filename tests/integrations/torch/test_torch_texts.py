"""callsite.torch's texts against torch's own where callsite caches them: code objects that
compare equal but come from different files, and a source file edited while a tracer that
recorded it is alive. Each scenario in a child process."""
import pytest

pytest.importorskip("torch", reason="torch is not installed in this venv (torch==2.13.0, 3.11)")

from test_torch import run  # noqa: E402


def test_equal_code_from_another_file(tmp_path):
    """CPython's code objects compare equal whatever their file: the same source run as
    "<string>" (a file torch's filter drops) and under a real file name, both tracers alive,
    gives torch's texts for each (the real file's forward frame is kept)."""
    run(f"""
        import os, torch.fx as fx, callsite.torch as ct
        source = ("import torch\\n"
                  "class M(torch.nn.Module):\\n"
                  "    def forward(self, x):\\n"
                  "        return torch.relu(x) + 1\\n")
        path = os.path.join({str(tmp_path)!r}, "real_model.py")
        with open(path, "w") as f:
            f.write(source)
        alive = []
        def traced(filename):
            namespace = {{}}
            exec(compile(source, filename, "exec"), namespace)
            tracer = fx.Tracer(); tracer.record_stack_traces = True
            alive.append(tracer)
            return [(n.name, n.stack_trace) for n in tracer.trace(namespace["M"]()).nodes]
        def both():
            return traced("<string>"), traced(path)
        theirs = both()
        assert any(path in (text or "") for _, text in theirs[1]), theirs
        assert ct.accelerate()
        assert both() == theirs
        assert both() == theirs
    """)


def test_edit_while_a_tracer_is_alive(tmp_path):
    """A model's file changed on disk and read again by linecache (checkcache) while a tracer
    that recorded its old lines is alive: that tracer, and a new one, give torch's text of the
    new line."""
    run(f"""
        import linecache, os, sys, time, torch.fx as fx, callsite.torch as ct
        sys.path.insert(0, {str(tmp_path)!r})
        path = os.path.join({str(tmp_path)!r}, "edited_alive.py")
        stamp = [time.time() - 1000]
        def write(expression):
            with open(path, "w") as f:
                f.write("import torch\\n"
                        "class Mod(torch.nn.Module):\\n"
                        "    def forward(self, x):\\n"
                        f"        return {{expression}}\\n")
            stamp[0] += 10  # same size: linecache tells the copies apart by time
            os.utime(path, (stamp[0], stamp[0]))
            linecache.checkcache(path)
        def traces(tracer=None):
            if tracer is None:
                tracer = fx.Tracer(); tracer.record_stack_traces = True
            return tracer, [n.stack_trace for n in tracer.trace(module.Mod()).nodes]
        write("torch.relu(x) + 1")
        import edited_alive as module
        _, old = traces()
        write("torch.relu(x) + 2")
        _, new = traces()
        assert old != new and any("torch.relu(x) + 2" in (t or "") for t in new), new
        assert ct.accelerate()
        # Each trace from one call site, so that the raw stacks repeat from edit to edit.
        alive = []
        for expression, theirs in (("+ 1", old), ("+ 2", new), ("+ 1", old)):
            write("torch.relu(x) " + expression)
            tracer, ours = traces()  # a new tracer, the earlier ones alive
            alive.append(tracer)
            assert ours == theirs, (expression, ours)
        for expression, theirs in (("+ 2", new), ("+ 1", old)):
            write("torch.relu(x) " + expression)
            assert traces(alive[0])[1] == theirs, expression  # the first tracer again
    """)


@pytest.mark.parametrize("reader", ["getline", "getlines"])
def test_linecache_reader_replaced(reader):
    """With linecache.getline or linecache.getlines replaced by a wrapper (doctest patches
    getlines; a redacting tool), torch's text quotes what the wrapper gives; so does
    callsite's, in both of torch's modes, and linecache's own readers are followed again once
    they are back."""
    run(f"""
        import linecache, torch_models as tm, callsite.torch as ct
        scenarios = tm.scenarios()
        original = getattr(linecache, {reader!r})
        def redacted(*args, **kwargs):
            found = original(*args, **kwargs)
            if isinstance(found, list):
                return [line.replace("return", "REDACTED") for line in found]
            return found.replace("return", "REDACTED")
        def all_texts():
            return [scenarios[name]() for name in ("transformer", "transformer_forward_only")]
        setattr(linecache, {reader!r}, redacted)
        theirs = all_texts()
        assert "REDACTED" in repr(theirs), "the wrapper changed nothing: nothing compared"
        setattr(linecache, {reader!r}, original)
        plain = all_texts()
        assert ct.accelerate()
        assert all_texts() == plain
        setattr(linecache, {reader!r}, redacted)
        assert all_texts() == theirs
        setattr(linecache, {reader!r}, original)
        assert all_texts() == plain
    """)


def test_file_name_a_str_subclass(tmp_path):
    """A code object whose co_filename is a str subclass overriding startswith/endswith (so
    that linecache, asked with it, takes the file for "<...>" and gives no line): torch's walk
    reads the name as a plain str and quotes the source line; so does callsite, the file read
    by callsite first."""
    run(f"""
        import linecache, os, torch, torch.fx as fx, callsite.torch as ct

        class Name(str):
            def startswith(self, *args):
                return True
            def endswith(self, *args):
                return True

        path = os.path.join({str(tmp_path)!r}, "model_named.py")
        source = ("import torch\\n"
                  "class M(torch.nn.Module):\\n"
                  "    def forward(self, x):\\n"
                  "        return torch.relu(x) + 1\\n")
        with open(path, "w") as f:
            f.write(source)

        def renamed(code):
            consts = tuple(renamed(c) if isinstance(c, type(code)) else c
                           for c in code.co_consts)
            return code.replace(co_filename=Name(path), co_consts=consts)

        namespace = {{}}
        exec(renamed(compile(source, path, "exec")), namespace)
        assert type(namespace["M"].forward.__code__.co_filename) is Name

        def texts(forward_only):
            tracer = fx.Tracer(); tracer.record_stack_traces = True
            tracer._record_forward_stack_traces_only = forward_only
            return [n.stack_trace for n in tracer.trace(namespace["M"]()).nodes]

        assert ct.accelerate()
        ours = [texts(False), texts(True)]
        assert ct.decelerate()
        linecache.clearcache()
        theirs = [texts(False), texts(True)]
        assert "return torch.relu(x) + 1" in repr(theirs), theirs
        assert ours == theirs, (ours, theirs)
    """)


def test_an_open_kernel_boundary_does_not_cut_torchs_texts():
    """A callsite.boundary open around a trace (a DSL's, an MLIR scope's) ends callsite's own
    captures at its kernel; torch's walk sees the whole stack, and so do callsite's texts of
    torch's rules: the native recorder, a tracer with its own filter and the Python path (with
    linecache's reader replaced)."""
    run("""
        import linecache, traceback, torch, torch.fx as fx, callsite, callsite.torch as ct

        def kernel(x):
            return torch.relu(x) + 1

        class Model(torch.nn.Module):
            def forward(self, x):
                return kernel(x) * 2

        class OwnFilter(fx.Tracer):
            def _filter_traceback_frames(self, summary):
                return traceback.StackSummary.from_list(
                    [f for f in summary if f.name in ("forward", "kernel", "texts")])

        def texts(tracer_type, forward_only):
            tracer = tracer_type(); tracer.record_stack_traces = True
            tracer._record_forward_stack_traces_only = forward_only
            return [n.stack_trace for n in tracer.trace(Model()).nodes]

        def every_mode():
            return [texts(t, f) for t in (fx.Tracer, OwnFilter) for f in (False, True)]

        theirs = every_mode()
        assert "in kernel" in repr(theirs) and "in forward" in repr(theirs), theirs
        assert ct.accelerate()
        original = linecache.getline
        with callsite.boundary(kernel):
            assert every_mode() == theirs
            linecache.getline = lambda *args: original(*args)
            try:
                assert every_mode() == theirs
            finally:
                linecache.getline = original
    """)
