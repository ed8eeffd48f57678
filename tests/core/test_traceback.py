"""callsite.Traceback and callsite.Frame: value semantics, rendering, construction, bad input."""
import json
import sys
import traceback

import pytest

import callsite

def two_captures():
    return [callsite.capture() for _ in range(2)]  # same call site twice


def test_equal_and_hash_for_the_same_call_site(callsite_backend):
    a, b = two_captures()
    assert a == b and hash(a) == hash(b)
    assert not (a != b)
    c = callsite.capture()
    assert c != a
    frames_of_helper = 2 if sys.version_info < (3, 12) else 1  # comprehensions inlined in 3.12
    assert a[frames_of_helper + 1 :] == c[1:]  # same callers
    assert a[frames_of_helper].code is c[0].code and a[frames_of_helper] != c[0]


def test_len_index_slice(callsite_backend):
    tb = callsite.capture()
    assert len(tb) == len(traceback.extract_stack())
    assert tb[0].name == "test_len_index_slice"
    assert tb[-1] == tb[len(tb) - 1]
    with pytest.raises(IndexError):
        tb[len(tb)]
    with pytest.raises(TypeError, match="integers or slices"):
        tb["0"]
    assert isinstance(tb[1:3], callsite.Traceback) and len(tb[1:3]) == 2
    assert tb[::-1].raw() == tb.raw()[::-1]
    assert tb[::2].raw() == tb.raw()[::2]
    assert list(tb) == list(tb.frames)


def test_skip_and_limit(callsite_backend):
    full = callsite.capture()
    assert callsite.capture(skip=1).raw() == full.raw()[1:]
    assert callsite.capture(1, 2).raw() == full.raw()[1:3]
    assert len(callsite.capture(limit=0)) == 0
    assert len(callsite.capture(skip=10_000)) == 0
    assert callsite.capture(limit=None, skip=0)[1:] == full[1:]


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"skip": -1}, ValueError, "skip must be >= 0"),
        ({"limit": -3}, ValueError, "limit must be >= 0"),
        ({"skip": "1"}, TypeError, "skip must be an int or None, not str"),
        ({"limit": 1.5}, TypeError, "limit must be an int or None, not float"),
        ({"skip": True}, TypeError, "skip must be an int"),
        ({"bogus": 1}, TypeError, "unexpected keyword argument 'bogus'"),
        ({"source": "stack"}, ValueError, "source must be 'walk' or 'window'"),
        ({"source": 3}, TypeError, "source must be 'walk' or 'window'"),
    ],
)
def test_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        callsite.capture(**kwargs)


def test_positional_and_duplicate_arguments():
    with pytest.raises(TypeError, match="at most 2 positional"):
        callsite.capture(0, 1, 2)
    with pytest.raises(TypeError, match="multiple values for argument 'skip'"):
        callsite.capture(0, skip=1)


def test_set_backend_rejects_unknown_names():
    with pytest.raises(ValueError, match="name must be 'internal' or 'public', not 'fast'"):
        callsite.set_backend("fast")


def test_frame_fields_and_rendering(callsite_backend):
    frame = callsite.capture()[0]
    expected = traceback.extract_stack(sys._getframe(), limit=1)[-1]
    assert frame.kind == "python"
    assert frame.filename == __file__ == expected.filename
    assert frame.name == "test_frame_fields_and_rendering"
    assert frame.qualname.endswith("test_frame_fields_and_rendering")
    assert frame.code is test_frame_fields_and_rendering.__code__
    assert frame.lineno == expected.lineno - 1  # extract_stack ran one line later
    assert frame.state is None and frame.lasti >= 0
    d = frame.to_dict()
    assert json.loads(json.dumps(d)) == d and d["lineno"] == frame.lineno
    assert str(frame).startswith(f'File "{__file__}", line {frame.lineno}')
    assert "callsite.Frame python" in repr(frame)


def test_repr_reads_like_a_traceback(callsite_backend):
    tb = callsite.capture(limit=2)
    text = repr(tb)
    assert text.startswith("<callsite.Traceback of 2 frames, innermost first:")
    assert f'File "{__file__}", line' in text and "in test_repr_reads_like_a_traceback" in text
    assert repr(callsite.capture(limit=0)) == "<callsite.Traceback of 0 frames, innermost first>"


def test_stack_summary_matches_extract_stack(callsite_backend):
    tb, expected = callsite.capture(), traceback.extract_stack()
    summary = tb.as_stack_summary()
    assert isinstance(summary, traceback.StackSummary)
    got = [(f.filename, f.lineno, f.name) for f in summary]
    want = [(f.filename, f.lineno, f.name) for f in expected]
    assert got[:-1] == want[:-1]  # the innermost differs only by the line of the call
    assert got[-1][0::2] == want[-1][0::2] and got[-1][1] == want[-1][1]
    if sys.version_info >= (3, 11):
        inner = summary[-1]
        assert (inner.colno, inner.end_colno) == (tb[0].colno, tb[0].end_colno)
    # format() is StackSummary.format(): with source lines looked up lazily.
    lines = tb.format()
    assert lines == summary.format()
    assert "tb, expected = callsite.capture(), traceback.extract_stack()" in lines[-1]


def test_to_list_is_json_ready(callsite_backend):
    tb = callsite.capture()
    rows = tb.to_list()
    assert [r["lineno"] for r in rows] == [f.lineno for f in tb]
    json.dumps(rows)


def test_from_frame_equals_capture(callsite_backend):
    tb, frame = callsite.capture(), sys._getframe()
    via_frame = callsite.Traceback.from_frame(frame)
    assert via_frame[1:] == tb[1:]
    assert via_frame[0].code is tb[0].code and via_frame[0].lasti > tb[0].lasti
    with pytest.raises(TypeError, match="expected a frame object, got int"):
        callsite.Traceback.from_frame(3)


def _raise_deep(n):
    if n == 0:
        raise KeyError("deep")
    _raise_deep(n - 1)


def test_from_traceback_matches_extract_tb():
    try:
        _raise_deep(3)
    except KeyError as e:
        tb = callsite.Traceback.from_traceback(e.__traceback__)
        expected = traceback.extract_tb(e.__traceback__)
    assert len(tb) == 5
    got = [(f.filename, f.lineno, f.name) for f in tb.as_stack_summary()]
    assert got == [(f.filename, f.lineno, f.name) for f in expected]
    if sys.version_info >= (3, 11):
        assert [(f.colno, f.end_colno) for f in tb.as_stack_summary()] == [
            (f.colno, f.end_colno) for f in expected
        ]
    with pytest.raises(TypeError, match="expected a traceback object"):
        callsite.Traceback.from_traceback(None)


def test_capture_inside_except_and_finally(callsite_backend):
    try:
        raise ValueError
    except ValueError:
        inside = callsite.capture()
    finally:
        in_finally = callsite.capture()
    assert inside[0].lineno == in_finally[0].lineno - 2
    assert inside[1:] == in_finally[1:]


def test_deep_stack_beyond_the_stack_buffer(callsite_backend):
    def recurse(n):
        return callsite.capture() if n == 0 else recurse(n - 1)

    depth = 2000  # > the 512-entry stack buffer: exercises the heap retry
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(depth + 500)
    try:
        tb = recurse(depth)
    finally:
        sys.setrecursionlimit(old)
    assert len(tb) == len(callsite.capture()) + depth + 1
    assert len(recurse.__code__.co_name) and all(f.name == "recurse" for f in tb[: depth + 1])
    limited = recurse(700)  # limit above the buffer, stack deeper than the limit
    assert len(limited) == len(callsite.capture()) + 701


def test_frames_and_slices_keep_code_alive(callsite_backend):
    namespace = {"callsite": callsite}
    exec("def doomed():\n    return callsite.capture()\n", namespace)
    tb = namespace["doomed"]()
    code = namespace["doomed"].__code__
    before = sys.getrefcount(code)
    part, frame = tb[:1], tb[0]
    assert sys.getrefcount(code) >= before + 2  # at least one for the slice, one for the Frame
    del part, frame
    assert sys.getrefcount(code) == before
    del tb
    assert sys.getrefcount(code) == before - 1


def test_copy_and_deepcopy_give_the_same_immutable_object():
    import copy
    import pickle
    tb = callsite.capture()
    frame = tb[0]
    assert copy.copy(tb) is tb and copy.deepcopy(tb) is tb
    assert copy.copy(frame) is frame and copy.deepcopy(frame) is frame
    # Inside containers too, and the copies still compare and render as the originals.
    held = copy.deepcopy({"where": [tb, frame]})
    assert held["where"][0] is tb and held["where"][1] is frame
    for obj, name in ((tb, "Traceback"), (frame, "Frame")):
        with pytest.raises(TypeError, match=rf"cannot pickle 'callsite\.{name}' object"):
            pickle.dumps(obj)
