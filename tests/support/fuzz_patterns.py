"""Coverage-guided fuzz target (atheris) for filter patterns and MLIR location text.

    python fuzz_patterns.py -runs=100000          # libFuzzer options

Each input is split into a filename, a function name and a rule set: the rules are added
(with every kind of rule method), the filename is judged by the filter, and a frame of code
with that filename and name is captured and rendered as text, MLIR text and a dict. Anything
but the documented TypeError/ValueError is a finding.
"""
from __future__ import annotations

import sys
import types

import atheris

with atheris.instrument_imports():
    import callsite

EXPECTED = (TypeError, ValueError)
_SRC = "def f(capture):\n    return capture(limit=2)\n"
_NS: dict = {}
exec(compile(_SRC, "seed.py", "exec"), _NS)
_CODE = _NS["f"].__code__


def test_one_input(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    filename = fdp.ConsumeUnicode(40)
    name = fdp.ConsumeUnicode(12) or "f"
    f = callsite.Filter(default_exclusions=fdp.ConsumeBool())
    for _ in range(fdp.ConsumeIntInRange(0, 4)):
        method = fdp.PickValueInList(["add_include", "add_exclude", "include_file",
                                      "exclude_file", "include_dir", "exclude_dir", "remove"])
        try:
            getattr(f, method)(fdp.ConsumeUnicode(16))
        except EXPECTED:
            pass
    f.keeps(filename)
    code = _CODE.replace(co_filename=filename, co_name=name)
    if hasattr(code, "co_qualname"):
        code = code.replace(co_qualname=name)
    tb = types.FunctionType(code, {})(callsite.capture)
    for fr in tb:
        str(fr), fr.to_dict()
        try:
            text = fr.to_mlir()
        except EXPECTED:
            continue
        assert text.isprintable() or "\\" in text or not text, text
    try:
        tb.to_mlir(filter=f)
    except EXPECTED:
        pass


if __name__ == "__main__":
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()
