"""callsite.boundary: inside `with callsite.boundary(kernel)` a capture, a filtered capture and
Filter.first_user_frame() end at the innermost frame running the kernel's code, which filters
keep; the oracle is CPython's own stack (traceback.extract_stack) cut at that frame."""
import asyncio
import functools
import gc
import random
import sys
import textwrap
import threading
import traceback
import tracemalloc
import weakref

import pytest

import callsite

def names(tb):
    return [f.name for f in tb]


def cut_at(stack, kernel_code):
    """CPython's frames (innermost first) up to and including the innermost one running
    `kernel_code` (matched by file, first line... through the live frame objects)."""
    out = []
    frame = sys._getframe(1)
    while frame is not None:
        out.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        if frame.f_code is kernel_code:
            return out
        frame = frame.f_back
    return out


def write_module(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    namespace = {"__name__": name, "callsite": callsite, "sys": sys, "cut_at": cut_at}
    exec(compile(path.read_text(), str(path), "exec"), namespace)
    return namespace


def generated_program(rng, above, below):
    """A kernel reached through `below` framework frames, calling `above` helper frames (a mix
    of nested closures, methods and plain functions) before the probe."""
    lines = ["def probe(kernel_code):",
             "    return callsite.capture(), cut_at(None, kernel_code)",
             ""]
    callee = "probe(kernel_code)"
    helpers = []
    for i in range(above):
        kind = rng.choice(["func", "closure", "method"])
        if kind == "func":
            lines += [f"def h{i}(kernel_code):", f"    return {callee}", ""]
            helpers.append(f"h{i}(kernel_code)")
        elif kind == "closure":
            lines += [f"def h{i}(kernel_code):", "    def inner():",
                      f"        return {callee}", "    return inner()", ""]
            helpers.append(f"h{i}(kernel_code)")
        else:
            lines += [f"class C{i}:", "    def m(self, kernel_code):",
                      f"        return {callee}", ""]
            helpers.append(f"C{i}().m(kernel_code)")
        callee = helpers[-1]
    lines += ["def kernel():", f"    return {callee.replace('kernel_code', 'kernel.__code__')}", ""]
    lines += ["def framework(n):",
              "    return kernel() if n == 0 else framework(n - 1)", "",
              f"def run():", f"    return framework({below})", ""]
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(12))
def test_capture_ends_at_the_kernel_on_generated_programs(tmp_path, callsite_backend, seed):
    rng = random.Random(seed)
    above, below = rng.randint(0, 8), rng.choice([0, 3, 40, 300])
    ns = write_module(tmp_path, f"gen{seed}", generated_program(rng, above, below))
    with callsite.boundary(ns["kernel"]):
        tb, oracle = ns["run"]()
    got = [(f.filename, f.lineno, f.name) for f in tb][1:]  # [0] is probe's capture line
    assert got == oracle[1:]
    assert tb[-1].name == "kernel"
    # Outside the boundary the same program gives the whole stack again.
    whole, _ = ns["run"]()
    assert names(whole)[:len(tb)] == names(tb)
    assert names(whole).count("framework") == below + 1
    assert len(whole) == len(tb) + below + 2 + len(traceback.extract_stack())


def test_filter_keeps_the_kernel_and_limit_leaves_room_for_it(tmp_path, callsite_backend):
    ns = write_module(tmp_path, "dsl_kernel", '''
        def op(flt, limit):
            return (callsite.capture(filter=flt), callsite.capture(filter=flt, limit=limit),
                    flt.first_user_frame())
        def a(flt, limit): return op(flt, limit)
        def b(flt, limit): return a(flt, limit)
        def c(flt, limit): return b(flt, limit)
        def kernel(flt, limit): return c(flt, limit)
        def framework(flt, limit, n):
            return kernel(flt, limit) if n == 0 else framework(flt, limit, n - 1)
    ''')
    everything_out = callsite.Filter(exclude=["dsl_kernel"])
    with callsite.boundary(ns["kernel"]):
        full, limited, first = ns["framework"](everything_out, 3, 10)
    # The file is excluded: only the kernel's frame survives, and it is the first user frame.
    assert names(full) == ["kernel"]
    assert names(limited) == ["kernel"]
    assert first.name == "kernel"
    keep_all = callsite.Filter()
    with callsite.boundary(ns["kernel"]):
        full, limited, first = ns["framework"](keep_all, 3, 10)
    assert names(full) == ["op", "a", "b", "c", "kernel"]
    assert names(limited) == ["op", "a", "kernel"]  # at most 3, the kernel always last
    assert first.name == "op"
    # A Traceback captured inside keeps that: Filter.apply later keeps the kernel too.
    with callsite.boundary(ns["kernel"]):
        raw, _, _ = ns["framework"](keep_all, 3, 2)
    assert names(everything_out.apply(raw)) == ["kernel"]
    assert "kernel" in raw.to_mlir(everything_out)


def test_kernel_of_nested_helper_closures(tmp_path, callsite_backend):
    ns = write_module(tmp_path, "closures", '''
        def kernel(build):
            def tile(i):
                def load():
                    return build(f"load{i}")
                def store():
                    return build(f"store{i}")
                return [load(), store()]
            return [op for i in range(2) for op in tile(i)]
        def launch(build, depth):
            return kernel(build) if depth == 0 else launch(build, depth - 1)
    ''')
    flt = callsite.Filter(exclude=[__file__])  # the op builder below is framework
    built = []
    def build(name):
        built.append((name, callsite.capture(filter=flt, limit=5)))
    with callsite.boundary(ns["kernel"]):
        ns["launch"](build, 60)
    for name, tb in built:
        chain = names(tb)
        assert chain[-1] == "kernel", (name, chain)
        assert chain[0] in ("load", "store") and "tile" in chain, (name, chain)
        assert "launch" not in chain and len(chain) <= 5


def test_nesting_restores_and_falls_back_to_an_enclosing_kernel(tmp_path, callsite_backend):
    ns = write_module(tmp_path, "nest", '''
        def inner_kernel(): return callsite.capture()
        def outer_kernel(k): return k()
        def unrelated(): pass
    ''')
    with callsite.boundary(ns["outer_kernel"]):
        with callsite.boundary(ns["inner_kernel"]):
            assert names(ns["outer_kernel"](ns["inner_kernel"])) == ["inner_kernel"]
        assert names(ns["outer_kernel"](ns["inner_kernel"])) == ["inner_kernel", "outer_kernel"]
        with callsite.boundary(ns["unrelated"]):  # not on the stack: the enclosing one cuts
            assert names(ns["outer_kernel"](ns["inner_kernel"])) == ["inner_kernel",
                                                                    "outer_kernel"]
    assert len(ns["outer_kernel"](ns["inner_kernel"])) > 2


def test_per_thread():
    ready, release = threading.Event(), threading.Event()
    seen = {}

    def kernel():
        return callsite.capture()

    def in_boundary():
        with callsite.boundary(kernel):
            seen["inside"] = names(kernel())
            ready.set()
            release.wait(10)

    t = threading.Thread(target=in_boundary)
    t.start()
    ready.wait(10)
    seen["other"] = names(kernel())  # this thread has no boundary open
    release.set()
    t.join()
    assert seen["inside"] == ["kernel"]
    assert len(seen["other"]) > 1


def test_per_asyncio_task():
    async def kernel():
        await asyncio.sleep(0)
        return names(callsite.capture())

    async def bounded():
        with callsite.boundary(kernel):
            return await kernel()

    async def unbounded():
        return await kernel()

    async def main():
        return await asyncio.gather(bounded(), unbounded(), bounded())

    inside, outside, again = asyncio.run(main())
    assert inside == again == ["kernel"]
    assert len(outside) > 1


def test_kernel_forms_and_errors():
    def kernel():
        pass

    @functools.wraps(kernel)
    def decorated(*args):
        return kernel(*args)

    class Kernels:
        def method(self):
            pass

        @staticmethod
        def static():
            pass

    assert callsite.boundary(kernel).code is kernel.__code__
    assert callsite.boundary(kernel.__code__).code is kernel.__code__
    assert callsite.boundary(decorated).code is kernel.__code__
    assert callsite.boundary(Kernels().method).code is Kernels.method.__code__
    assert callsite.boundary(Kernels.__dict__["static"]).code is Kernels.static.__code__
    for bad in (None, 3, "kernel", print):
        with pytest.raises(TypeError, match=r"kernel must be a function, method or code "
                                            rf"object .*not {type(bad).__name__}"):
            callsite.boundary(bad)
    with pytest.raises(TypeError):
        callsite.boundary()
    b = callsite.boundary(kernel)
    assert not b.open
    with pytest.raises(RuntimeError, match="not open"):
        b.__exit__(None, None, None)
    with b:
        assert b.open
        with pytest.raises(RuntimeError, match="already open"):
            b.__enter__()
    assert not b.open
    assert "kernel" in repr(b)


def test_an_exception_inside_closes_the_boundary():
    def kernel():
        return callsite.capture()
    with pytest.raises(ZeroDivisionError):
        with callsite.boundary(kernel):
            1 / 0
    assert len(kernel()) > 1


def test_no_code_reference_left(tmp_path):
    ns = write_module(tmp_path, "refs", "def kernel(): return callsite.capture()\n")
    code = ns["kernel"].__code__
    before = sys.getrefcount(code)
    for _ in range(100):
        with callsite.boundary(ns["kernel"]):
            tb = ns["kernel"]()
        del tb
    gc.collect()
    assert sys.getrefcount(code) == before
    holder = weakref.ref(ns["kernel"])
    del ns
    gc.collect()
    assert holder() is None


def test_capture_skip_past_the_kernel_is_empty():
    def kernel():
        return callsite.capture(skip=3)
    with callsite.boundary(kernel):
        assert len(kernel()) == 0


@pytest.mark.skipif(sys.version_info < (3, 11), reason="3.10's frames are all frame objects "
                    "already: the public walk creates none, so there is nothing to count")
def test_nothing_below_the_kernel_is_walked():
    """The public-API walk creates a frame object for every frame it visits that has none
    (PyFrame_GetBack, 3.11+), which stays allocated while the frame runs: the blocks a capture
    leaves allocated count the frames it visited. tracemalloc counts them under any allocator
    (sys.getallocatedblocks() is 0 under PYTHONMALLOC=malloc, as in the sanitized run)."""
    if tracemalloc.is_tracing():
        pytest.skip("tracemalloc is already tracing: its traces would not be the capture's alone")
    before = callsite.get_backend()
    callsite.set_backend("public")

    def kernel():
        tracemalloc.start()
        try:
            tb = callsite.capture()
            # Blocks allocated since start() and still held: the capture's, and a few of
            # take_snapshot()'s own.
            blocks = len(tracemalloc.take_snapshot().traces)
        finally:
            tracemalloc.stop()
        return blocks, len(tb)

    def framework(n):
        return kernel() if n == 0 else framework(n - 1)

    gc.disable()
    try:
        with callsite.boundary(kernel):
            bounded, bounded_len = framework(300)
        whole, whole_len = framework(300)
    finally:
        gc.enable()
        callsite.set_backend(before)
    assert bounded_len == 1
    assert whole_len > 300
    assert whole >= 300          # one new frame object per framework frame visited
    assert bounded < 20          # the Traceback itself: no framework frame visited
