"""auto_locations(source="window"): locations from callsite.tracking's window of recent call
sites instead of a stack walk."""
import pytest

import callsite
import callsite.mlir
import callsite.tracking
import mlir_support as H

# The framework (excluded by the filter): a generated-style op class, a Python __init__.
LIBRARY = '''
def make(ir):
    class CustomOp(ir.OpView):
        OPERATION_NAME = "test.custom"
        _ODS_REGIONS = (0, True)

        def __init__(self):
            super().__init__(self.OPERATION_NAME, self._ODS_REGIONS, None, None,
                             results=[], operands=[])

    return CustomOp()
'''

PROGRAM = '''
def leaf(ir, lib):
    return lib.make(ir)

def kernel(ir, lib):
    op = leaf(ir, lib)
    return str(op.location)
'''


@pytest.fixture(params=H.CANDIDATES)
def ir(request):
    return H.import_ir(request.param)


def test_window_gives_the_line_that_built_the_op(ir, tmp_path):
    """Ops built through Python builders (generated op classes, a framework's functions): the
    window's most recent kept call site is the stack's innermost kept frame."""
    prog = H.write_program(tmp_path, "windowed", PROGRAM)
    lib = H.write_program(tmp_path, "framework", LIBRARY)
    f = H.support_filter()
    f.exclude_file(lib.__file__)
    with H.context(ir):
        with callsite.mlir.auto_locations(f, limit=1, ir=ir):
            walked = prog.kernel(ir, lib)
        with callsite.tracking.enable(window=16):
            with callsite.mlir.auto_locations(f, limit=1, ir=ir, source="window"):
                windowed = prog.kernel(ir, lib)
    assert windowed == walked
    assert '"leaf"(' in walked and "windowed.py" in walked


def test_window_needs_tracking_and_a_valid_source(ir):
    with pytest.raises(ValueError, match="source must be 'walk' or 'window'"):
        with callsite.mlir.auto_locations(ir=ir, source="stack"):
            pass
    callsite.tracking.disable()
    # Refused when the scope is entered, not at the first op: the scope never opens.
    with H.context(ir):
        with pytest.raises(RuntimeError, match=r"source='window'\) needs call tracking.*"
                                               r"callsite\.tracking\.enable\(\)"):
            with callsite.mlir.auto_locations(ir=ir, source="window"):
                pytest.fail("the scope opened without tracking")
        assert callsite.mlir._m.settings.get(None) is None
        assert not any(b.installed for b in callsite.mlir.bindings(ir))
        # Tracking switched off inside an open scope: the op itself still says why.
        with callsite.tracking.enable(), callsite.mlir.auto_locations(ir=ir, source="window"):
            callsite.tracking.disable()
            with pytest.raises(RuntimeError, match="needs call tracking"):
                ir.Operation.create("test.op")


DEEP = '''
def down(k, ir, lib):
    if k == 0:
        return str(lib.make(ir).location)
    return down(k - 1, ir, lib)
'''


def test_an_explicit_limit_replaces_the_filters_on_both_sources(ir, tmp_path):
    """MLIR's rule: an explicit limit replaces the filter's (it is not capped by it), whether
    the frames come from a walk or from the window."""
    prog = H.write_program(tmp_path, "deep", DEEP)
    lib = H.write_program(tmp_path, "framework", LIBRARY)
    f = H.support_filter()
    f.exclude_file(lib.__file__)
    f.limit = 10
    counts = {}
    with H.context(ir), callsite.tracking.enable(window=64):
        for source in ("walk", "window"):
            for limit in (None, 20, 4):
                with callsite.mlir.auto_locations(f, limit=limit, ir=ir, source=source):
                    counts[source, limit] = prog.down(30, ir, lib).count("deep.py")
    assert counts["walk", None] == counts["window", None] == 10
    assert counts["walk", 20] == counts["window", 20] == 20
    assert counts["walk", 4] == counts["window", 4] == 4
