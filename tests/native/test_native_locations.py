"""callsite.native.Location checks its fields when built, and an executable made with
locations=[...] reified past the end of its list says so (state, number of locations)."""
from __future__ import annotations

import warnings

import pytest

from callsite import native


def test_location_accepts_what_a_reifier_may_return():
    loc = native.Location("prog.dsl", 3, "fn", "Mod.fn", 4, 0, 12, None)
    assert tuple(loc) == ("prog.dsl", 3, "fn", "Mod.fn", 4, 0, 12, None)
    assert native.Location("prog.dsl", None) == ("prog.dsl", None, None, None, None, None,
                                                 None, None)
    assert native.Location("prog.dsl", 0, colno=0, end_colno=2**31 - 1).end_colno == 2**31 - 1
    code = compile("x", "f.py", "eval")
    assert native.Location(filename="f.py", lineno=1, code=code).code is code
    assert isinstance(native.Location("a", 1), tuple)
    assert native.Location("a", 1)._replace(lineno=2) == native.Location("a", 2)


P = {"filename": "p", "lineno": 1}  # valid fields the cases below change one of


@pytest.mark.parametrize("kwargs, error, message", [
    ({**P, "filename": b"prog.dsl"}, TypeError, "Location filename must be a str, not bytes"),
    ({**P, "filename": None}, TypeError, "Location filename must be a str, not NoneType"),
    ({**P, "lineno": "3"}, TypeError, "Location lineno must be an int or None, not str"),
    ({**P, "lineno": True}, TypeError, "Location lineno must be an int or None, not bool"),
    ({**P, "lineno": 1.0}, TypeError, "Location lineno must be an int or None, not float"),
    ({**P, "lineno": -1}, ValueError,
     r"Location lineno must be in \[0, 2147483647\] or None, got -1"),
    ({**P, "lineno": 2**31}, ValueError, "Location lineno must be in .* got 2147483648"),
    ({**P, "end_lineno": -2}, ValueError, "Location end_lineno must be"),
    ({**P, "colno": -1}, ValueError, "Location colno must be"),
    ({**P, "end_colno": "x"}, TypeError, "Location end_colno must be an int"),
    ({**P, "name": 3}, TypeError, "Location name must be a str or None, not int"),
    ({**P, "qualname": b"q"}, TypeError, "Location qualname must be a str or None"),
    ({**P, "code": "code"}, TypeError, "Location code must be a code object or None, not str"),
    ({**P, "filename": "a\x00b.dsl"}, ValueError, "Location filename must not contain a NUL"),
])
def test_location_refuses_bad_fields_when_built(kwargs, error, message):
    with pytest.raises(error, match=message):
        native.Location(**kwargs)


def test_location_positional_and_missing_arguments():
    with pytest.raises(TypeError):
        native.Location("prog.dsl")  # lineno is required
    with pytest.raises(TypeError):
        native.Location("prog.dsl", 1, None, None, None, None, None, None, "extra")


@pytest.mark.parametrize("count", [1, 3])
def test_a_state_past_the_end_of_locations_names_the_state_and_the_count(count):
    exe = native.Executable("table", locations=[native.Location("t.dsl", k + 1)
                                                for k in range(count)], kind="dsl")
    assert exe.reify(count - 1).lineno == count
    plural = "location" if count == 1 else "locations"
    with pytest.warns(native.ReificationWarning,
                      match=rf"'table' failed for state {count + 4}: state {count + 4} is past "
                            rf"the end of locations= \({count} {plural}: states 0 to "
                            rf"{count - 1}\)") as got:
        frame = exe.reify(count + 4)
    assert len(got) == 1
    assert (frame.filename, frame.lineno) == ("<dsl:table>", None)
    with warnings.catch_warnings():  # once per executable
        warnings.simplefilter("error")
        assert exe.reify(count + 5).lineno is None


def test_a_state_past_the_end_seen_by_a_capture():
    import callsite

    exe = native.Executable("table", locations=[native.Location("t.dsl", 1)], kind="dsl")
    with pytest.warns(native.ReificationWarning, match="state 7 is past the end of locations="):
        with exe.frame(7):
            names = [(f.name, f.filename) for f in callsite.capture(limit=1)]
    assert names == [("table", "<dsl:table>")]
