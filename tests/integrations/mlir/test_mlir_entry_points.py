"""Every entry point where MLIR's bindings resolve a default location and consult the traceback
switch (MainModule.cpp maybeGetTracebackLocation's callers: OpView.__init__,
OpView.build_generic, Operation.create, Module.create), with loc= by keyword, by position and
absent: callsite's location equals MLIR's own loc_tracebacks() output."""
import pytest

import callsite.mlir
import mlir_support as H

PROGRAM = '''
def custom_op_class(ir):
    class CustomOp(ir.OpView):  # as a generated class is (unregistered: any context takes it)
        OPERATION_NAME = "test.custom"
        _ODS_REGIONS = (0, True)

        def __init__(self, loc=None, ip=None, positional=False):
            if positional:
                super().__init__(self.OPERATION_NAME, self._ODS_REGIONS, None, None, [], [],
                                 None, None, None, loc)
            else:
                super().__init__(self.OPERATION_NAME, self._ODS_REGIONS, None, None,
                                 results=[], operands=[], loc=loc, ip=ip)

    return CustomOp


def build(ir, entry, loc_mode):
    explicit = ir.Location.file("explicit.py", 7, 1)
    if entry == "Module.create":
        if loc_mode == "keyword":
            return str(ir.Module.create(loc=explicit).operation.location)
        if loc_mode == "positional":
            return str(ir.Module.create(explicit).operation.location)
        return str(ir.Module.create().operation.location)
    if entry == "Operation.create":
        if loc_mode == "keyword":
            op = ir.Operation.create("test.op", loc=explicit)
        elif loc_mode == "positional":
            op = ir.Operation.create("test.op", None, None, None, None, 0, explicit)
        else:
            op = ir.Operation.create("test.op")
    elif entry == "OpView.__init__":
        cls = custom_op_class(ir)
        if loc_mode == "keyword":
            op = cls(loc=explicit)
        elif loc_mode == "positional":
            op = cls(explicit, positional=True)
        else:
            op = cls()
    else:  # OpView.build_generic
        cls = custom_op_class(ir)
        if loc_mode == "keyword":
            op = cls.build_generic(results=[], operands=[], loc=explicit)
        elif loc_mode == "positional":
            op = cls.build_generic([], [], None, None, None, explicit)
        else:
            op = cls.build_generic(results=[], operands=[])
    text = str(op.location)
    op.operation.erase()
    return text
'''

ENTRIES = ["Module.create", "Operation.create", "OpView.__init__", "OpView.build_generic"]


@pytest.fixture(params=H.CANDIDATES)
def ir(request):
    return H.oracle_ir(request.param)


@pytest.mark.parametrize("loc_mode", ["absent", "keyword", "positional"])
@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize("on_explicit", ["use_explicit", "use_traceback"])
def test_entry_point_matches_mlir(ir, tmp_path, entry, loc_mode, on_explicit):
    prog = H.write_program(tmp_path, "entry", PROGRAM)
    actn = getattr(ir, "OnExplicitAction", None)
    mlir_kw = {"on_explicit_actn": getattr(actn, on_explicit.upper())} if actn else {}
    if not mlir_kw and on_explicit != "use_explicit":
        pytest.skip("these bindings have no on_explicit action")
    out = []
    ways = [lambda: ir.loc_tracebacks(**mlir_kw),
            lambda: callsite.mlir.loc_tracebacks(ir=ir, **mlir_kw)]
    with H.context(ir):
        for way in ways:
            with way():
                out.append(prog.build(ir, entry, loc_mode))
    mlir_text, ours = out
    assert ours == mlir_text
    if loc_mode == "absent" or on_explicit == "use_traceback":
        assert "entry.py" in ours, ours
    else:
        assert ours == 'loc("explicit.py":7:1)'
