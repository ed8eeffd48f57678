"""Shared helpers of the MLIR tests (no tests here): the installed bindings and test programs.

Everything MLIR-global these tests touch is a file they own: MLIR's rules cannot be removed,
so each test registers rules only for files it wrote itself. This file is excluded both in
MLIR's rules and in callsite's default filter, so `make()` below is invisible to both and the
innermost kept frame is its caller — the same instruction for MLIR's op and callsite's capture.
"""
import importlib
import importlib.util
import sys
import textwrap

import pytest

import callsite
import callsite.mlir

ALL_CANDIDATES = ["iree.compiler.ir", "jaxlib.mlir.ir", "mlir.ir"]
# Parametrize over the distributions installed (found without importing them); the others are
# reported once by test_mlir.py::test_missing_bindings_are_reported.
CANDIDATES = [n for n in ALL_CANDIDATES
              if importlib.util.find_spec(n.split(".")[0]) is not None] or ALL_CANDIDATES[:1]
_found = {}


def import_ir(name):
    """The ir module `name`, or pytest.skip with the reason."""
    if name not in _found:
        try:
            ir = importlib.import_module(name)
            ir.Context  # noqa: B018  (a real bindings module)
            _found[name] = (ir, None)
        except Exception as e:  # ImportError, or a broken install
            _found[name] = (None, f"{name} unavailable: {type(e).__name__}: {e}")
    ir, why = _found[name]
    if ir is None:
        pytest.skip(why)
    return ir


def mlir_walk_refusal(ir):
    """Why MLIR's own loc_tracebacks() cannot serve as the oracle here, or None."""
    if not hasattr(ir, "loc_tracebacks"):
        return f"{ir.__name__} has no loc_tracebacks() (older MLIR)"
    with context(ir):
        with ir.loc_tracebacks():
            loc = str(ir.Operation.create("test.probe").location)
    if loc == "loc(unknown)":
        # iree-base-compiler's abi3 (stable-ABI) wheels for 3.12+ are built without the
        # frame-walking C API: their loc_tracebacks() records no frame at all.
        return (f"{ir.__name__}'s loc_tracebacks() records no frames in this build "
                f"(Python {sys.version_info[0]}.{sys.version_info[1]}; stable-ABI wheel)")
    return None


class context:
    """`with context(ir) as ctx:` a Context allowing unregistered ops, an insertion point in a
    fresh module, and no Location.current."""

    def __init__(self, ir):
        self.ir = ir

    def __enter__(self):
        ir = self.ir
        self.ctx = ir.Context()
        self.ctx.allow_unregistered_dialects = True
        self.ctx.__enter__()
        self.module = ir.Module.create(ir.Location.unknown())
        self.ip = ir.InsertionPoint(self.module.body)
        self.ip.__enter__()
        return self.ctx

    def __exit__(self, *exc):
        self.ip.__exit__(*exc)
        self.ctx.__exit__(*exc)
        del self.ip, self.module


def make(ir, loc_filter=None, **kw):
    """Builds one generic op and captures callsite's Traceback at the same call site (this file
    is excluded everywhere): returns (str(op.location), traceback.to_mlir())."""
    op = ir.Operation.create("test.op", **kw)
    text = str(op.location)
    tb = callsite.capture(1, filter=loc_filter) if loc_filter is not None else None
    op.erase()
    return text, tb.to_mlir() if tb is not None else None


def make_with_frame(ir, loc_filter):
    """Builds one op; returns (str(op.location), str(callsite.mlir.location(loc_filter)) at the
    same call site, CPython's own view of the kept frames then: cpython_frames())."""
    op = ir.Operation.create("test.op")
    text = str(op.location)
    op.erase()
    frames = cpython_frames(sys._getframe(1), loc_filter.keeps, loc_filter.limit)
    return text, str(callsite.mlir.location(loc_filter, skip=1)), frames


def cpython_frames(frame, keep, limit):
    """(filename, co_name, co_qualname, lineno, colno, end_lineno, end_colno) of the kept frames
    from `frame` outwards, from frame objects and co_positions() (read while they run)."""
    out = []
    while frame is not None and (limit is None or len(out) < limit):
        code = frame.f_code
        if keep(code.co_filename):
            if sys.version_info >= (3, 11):
                line, end_line, col, end_col = list(code.co_positions())[frame.f_lasti // 2]
                out.append((code.co_filename, code.co_name, code.co_qualname, line, col,
                            end_line, end_col))
            else:
                out.append((code.co_filename, code.co_name, code.co_name, frame.f_lineno,
                            None, None, None))
        frame = frame.f_back
    return out


def make_opview(ir, **kw):
    """Builds an op through OpView.__init__ (the path every generated op class takes)."""
    return str(opview_class(ir)(**kw).location)


_opview_classes = {}


def opview_class(ir):
    if ir not in _opview_classes:
        class TestOp(ir.OpView):
            OPERATION_NAME = "test.opview"
            _ODS_REGIONS = (0, True)

            def __init__(self, *, loc=None, ip=None):
                super().__init__(self.OPERATION_NAME, self._ODS_REGIONS, None, None,
                                 results=[], operands=[], loc=loc, ip=ip)

        _opview_classes[ir] = TestOp
    return _opview_classes[ir]


def write_program(tmp_path, name, source):
    """Writes `source` to tmp_path/name.py and imports it (a fresh, unique co_filename)."""
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(f"callsite_mlir_test_{name}_{id(path)}", str(path))
    module = importlib.util.module_from_spec(spec)
    module.__dict__["H"] = sys.modules[__name__]
    spec.loader.exec_module(module)
    return module


def exclude_everywhere(ir, path, *filters):
    """MLIR's rule and the same rule in callsite's filters (and the default one)."""
    ir._globals.register_traceback_file_exclusion(str(path))
    callsite.mlir.register_traceback_file_exclusion(str(path))
    for f in filters:
        f.exclude_file(str(path))


def include_everywhere(ir, path, *filters):
    ir._globals.register_traceback_file_inclusion(str(path))
    callsite.mlir.register_traceback_file_inclusion(str(path))
    for f in filters:
        f.include_file(str(path))


def support_filter():
    """A filter with callsite's defaults plus this file excluded."""
    f = callsite.Filter()
    f.exclude_file(__file__)
    return f


# This file's frames are nobody's: not MLIR's (registered as soon as any bindings load), not
# callsite's default filter's.
callsite.mlir.register_traceback_file_exclusion(__file__)


def register_support_exclusion(ir):
    ir._globals.register_traceback_file_exclusion(__file__)


def oracle_ir(name):
    """The bindings `name` for a test whose oracle is MLIR's own walk: skipped where that walk
    records nothing; this file's frames excluded from MLIR's rules."""
    ir = import_ir(name)
    why = mlir_walk_refusal(ir)
    if why:
        pytest.skip(why)
    register_support_exclusion(ir)
    return ir
