"""The kernel boundary on MLIR locations: under auto_locations(boundary=kernel) (or inside
`with callsite.boundary(kernel)`) every op's location is the chain from the op's line up to
the kernel's, the kernel's frame kept whatever the filter says and the limit leaving room for
it; the oracle is the location built with the bindings' own API from CPython's frame objects
(tests/integrations/mlir/test_mlir.py's expected_location)."""
import re
import sys

import pytest

import callsite
import callsite.mlir
import mlir_support as H
from test_mlir import expected_location


@pytest.fixture(params=H.CANDIDATES)
def ir(request):
    return H.import_ir(request.param)


def bounded_frames(frame, keep, limit, kernel_code):
    """CPython's kept frames from `frame` out to the innermost one running `kernel_code` (kept
    whatever `keep` says), at most `limit` with the kernel's last."""
    chain = []
    while frame is not None:
        chain.append(frame)
        if frame.f_code is kernel_code:
            break
        frame = frame.f_back
    at_kernel = chain[-1].f_code is kernel_code
    above = chain[:-1] if at_kernel else chain
    picked = [f for f in above if keep(f.f_code.co_filename)]
    if limit is not None:
        picked = picked[:max(limit - at_kernel, 0)]
    if at_kernel and (limit is None or limit > 0):
        picked.append(chain[-1])
    out = []
    for f in picked:
        code = f.f_code
        if sys.version_info >= (3, 11):
            line, end_line, col, end_col = list(code.co_positions())[f.f_lasti // 2]
            out.append((code.co_filename, code.co_name, code.co_qualname, line, col, end_line,
                        end_col))
        else:
            out.append((code.co_filename, code.co_name, code.co_name, f.f_lineno, None, None,
                        None))
    return out


# The DSL's op builder, in a file of its own that every filter here excludes (as a DSL's files
# are): the innermost kept frame is its caller's, at the same instruction for the op and the
# oracle's probe.
EMIT = '''
import sys
def emit(ir, probe):
    op = ir.Operation.create("test.op")
    text = str(op.location)
    op.erase()
    return text, probe(sys._getframe(1))
'''

PROGRAM = '''
def kernel(ir, probe):
    def tile(i):
        def load():
            return emit(ir, probe)
        return load()
    return [tile(i) for i in range(2)]
def framework(ir, probe, n):
    return kernel(ir, probe) if n == 0 else framework(ir, probe, n - 1)
'''


def program(tmp_path, name):
    prog = H.write_program(tmp_path, name, PROGRAM)
    prog.emit = H.write_program(tmp_path, "dslemit", EMIT).emit
    return prog


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("exclude_kernel_file", [False, True])
def test_locations_end_at_the_kernel(ir, tmp_path, limit, exclude_kernel_file):
    prog = program(tmp_path, "dslprog")
    f = H.support_filter()
    f.exclude_file(str(tmp_path / "dslemit.py"))
    f.limit = limit
    if exclude_kernel_file:  # as a DSL excluding its users' file would: the kernel stays
        f.exclude_file(str(tmp_path / "dslprog.py"))
    code = prog.kernel.__code__
    with H.context(ir):
        with callsite.mlir.auto_locations(f, ir=ir, boundary=prog.kernel):
            results = prog.framework(ir, lambda fr: bounded_frames(fr, f.keeps, limit, code), 30)
        for text, frames in results:
            assert text == expected_location(ir, frames)
            assert "framework" not in text
            assert '"kernel"' in text


def test_boundary_scope_and_trace_then_emit(ir, tmp_path):
    prog = program(tmp_path, "dslprog2")
    f = H.support_filter()
    f.exclude_file(str(tmp_path / "dslemit.py"))
    f.exclude_file(str(tmp_path / "dslprog2.py"))
    kept = []
    probe = lambda fr: kept.append(callsite.capture(1, filter=f))  # noqa: E731
    with H.context(ir):
        with callsite.boundary(prog.kernel), callsite.mlir.auto_locations(f, ir=ir):
            inside = [text for text, _ in prog.framework(ir, probe, 5)]
        with callsite.mlir.auto_locations(f, ir=ir):
            outside = [text for text, _ in prog.framework(ir, lambda fr: None, 5)]
        later = [str(callsite.mlir.location(tb)) for tb in kept]
    # Inside: only the kernel's frame survives the filter; outside: nothing of the file.
    assert all(t.startswith('loc("kernel"') or t.startswith('loc("kernel.') for t in inside), inside
    assert all("dslprog2" not in t for t in outside), outside
    assert later == inside


def test_bad_boundary_names_the_argument(ir):
    with pytest.raises(TypeError, match="boundary must be a function, method or code object"):
        with callsite.mlir.auto_locations(ir=ir, boundary=42):
            pass


# --- each bindings in its own process, the peers' included --------------------------------

CHILD = r'''
import importlib, json, os, sys
import callsite, callsite.mlir
package, program, below = sys.argv[1], sys.argv[2], int(sys.argv[3])
ir = importlib.import_module(package + ".ir")
sys.setrecursionlimit(10_000)
namespace = {"ir": ir}
exec(compile(open(program).read(), program, "exec"), namespace)
flt = callsite.Filter(limit=4)
flt.exclude_file(program.replace(".py", "_emit.py"))
emit_ns = {"ir": ir}
emit_file = program.replace(".py", "_emit.py")
exec(compile(open(emit_file).read(), emit_file, "exec"), emit_ns)
namespace["emit"] = emit_ns["emit"]
with ir.Context() as ctx, ir.Location.unknown():
    ctx.allow_unregistered_dialects = True
    module = ir.Module.create()
    with ir.InsertionPoint(module.body):
        with callsite.mlir.auto_locations(flt, boundary=namespace["kernel"]):
            ops = namespace["framework"](below)
        texts = [str(op.location) for op in ops]
print(json.dumps(texts))
'''

KERNEL_FILE = '''
def kernel():
    def tile(i):
        def row(j):
            def element():
                return emit()
            return element()
        return [row(j) for j in range(2)]
    return [op for i in range(2) for op in tile(i)]
def framework(n):
    return kernel() if n == 0 else framework(n - 1)
'''
EMIT_FILE = '''
def emit():
    return ir.Operation.create("dsl.op")
'''


def _kernel_files(tmp_path):
    program = tmp_path / "kernel_prog.py"
    program.write_text(KERNEL_FILE)
    (tmp_path / "kernel_prog_emit.py").write_text(EMIT_FILE)
    return str(program)


def _check_child(python, package, tmp_path):
    import json
    import peers
    program = _kernel_files(tmp_path)
    probe = peers.run(python, f"import {package}.ir")
    if probe.returncode:
        pytest.skip(f"{package}.ir is not usable here: {probe.stderr.strip()[-200:]}")
    by_depth = {}
    for below in (0, 400):
        run = peers.run(python, CHILD, package, program, str(below))
        assert run.returncode == 0, run.stderr
        by_depth[below] = json.loads(run.stdout.strip().splitlines()[-1])
    # The same chain whatever the depth under the kernel: the innermost 3 of the filter's 4
    # (element, row, then tile or, before 3.12, tile's list comprehension), then the kernel.
    assert by_depth[0] == by_depth[400]
    assert len(by_depth[0]) == 4  # 2 tiles x 2 rows
    for text in by_depth[0]:
        assert "framework" not in text and "_emit.py" not in text, text
        assert text.count(" at ") == 3, text  # four frames: the limit, the kernel last
        # The qualified name from 3.11 (co_qualname), the plain one before.
        element = re.search(r'"(kernel\.<locals>\.tile\.<locals>\.row\.<locals>\.)?element"', text)
        assert element and element.start() < text.index('"kernel"'), text


@pytest.mark.parametrize("package", [n.rpartition(".")[0] for n in H.ALL_CANDIDATES])
def test_kernel_of_closures_in_its_own_process(package, tmp_path):
    _check_child(sys.executable, package, tmp_path)


@pytest.mark.parametrize("peer", ["wave", "flydsl", "torch-mlir", "catalyst"])
def test_kernel_of_closures_on_peer(peer, tmp_path):
    import peers
    _check_child(peers.peer_python(peer), peers.PEER_PACKAGES[peer], tmp_path)
