"""Line-table decoding vs CPython's own: every code unit of every code object we can reach."""
import sys
import types

import pytest

import callsite
from code_objects import all_code_objects


def expected_positions(code):
    """What CPython reports per code unit: co_positions() (3.11+) or co_lines() (3.10)."""
    units = len(code.co_code) // 2
    if sys.version_info >= (3, 11):
        positions = list(code.co_positions())
        assert len(positions) == units
        return positions
    lines = [None] * units
    for start, end, line in code.co_lines():
        for offset in range(start, end, 2):
            lines[offset // 2] = line
    return [(line, None, None, None) for line in lines]


def test_every_reachable_code_object_decodes_like_cpython(callsite_testing):
    import asyncio, dataclasses, email.parser, json, typing, unittest  # noqa: F401  more code
    checked = 0
    for code in all_code_objects():
        assert callsite_testing.code_positions(code) == expected_positions(code), code
        checked += 1
    assert checked > 500


def test_generated_sources_with_long_lines_and_far_columns(callsite_testing):
    # Columns past 127 and line jumps > 2 take the long entry form (code 14) on 3.11+.
    pad = " " * 200
    src = (
        "def f(a, b):\n"
        f"    x = ({pad}a +\n"
        "        b)\n"
        + "\n" * 300
        + f"    return [{pad}x for _ in range(3)]\n"
    )
    code = compile(src, "<gen>", "exec")
    for c in [code, *[k for k in code.co_consts if isinstance(k, types.CodeType)]]:
        assert callsite_testing.code_positions(c) == expected_positions(c)


def test_rejects_non_code(callsite_testing):
    with pytest.raises(TypeError, match="expected a code object"):
        callsite_testing.code_positions("nope")


def test_frame_fields_match_co_positions_at_the_capture_point():
    def here():
        return callsite.capture()[0], sys._getframe()

    frame, pyframe = here()
    assert frame.code is pyframe.f_code
    assert frame.lineno == pyframe.f_lineno
    if sys.version_info >= (3, 11):
        lasti = frame.lasti
        assert (frame.lineno, frame.end_lineno, frame.colno, frame.end_colno) == list(
            frame.code.co_positions()
        )[lasti // 2]
