"""Every public callable has an inspect.signature, and the documented keywords work."""
import inspect

import pytest

import callsite
import callsite.mlir
import callsite.native
import callsite.tracking

MODULES = [callsite, callsite.mlir, callsite.tracking, callsite.native]
CLASSES = [callsite.Traceback, callsite.Frame, callsite.Filter, callsite.native.Executable,
           callsite.native.NativeFrame]


def public_callables():
    seen = []
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if callable(obj) and not isinstance(obj, type):
                seen.append(pytest.param(obj, id=f"{module.__name__}.{name}"))
    for cls in CLASSES:
        for name, attr in vars(cls).items():
            if name.startswith("_") or not callable(getattr(cls, name)):
                continue
            seen.append(pytest.param(getattr(cls, name), id=f"{cls.__name__}.{name}"))
    return seen


@pytest.mark.parametrize("fn", public_callables())
def test_has_a_signature(fn):
    inspect.signature(fn)


@pytest.mark.parametrize("fn, expected", [
    (callsite.capture, "(skip=0, limit=None, *, filter=None, source='walk')"),
    (callsite.Filter, "(include=(), exclude=(), limit=10, *, default_exclusions=True)"),
    (callsite.Filter.exclude_dir, "(self, path, /)"),
    (callsite.Filter.first_user_frame, "(self, /, skip=0)"),
    (callsite.Traceback.to_mlir, "(self, /, filter=None)"),
    (callsite.Traceback.index, "(self, value, start=0, stop=9223372036854775807, /)"),
    (callsite.Traceback.from_frame, "(frame, /)"),
    (callsite.mlir.location, "(source=None, /, *, filter=None, skip=0, context=None, limit=None)"),
    (callsite.tracking.window, "(skip=0, limit=None, *, filter=None)"),
    (callsite.tracking.last, "(filter=None, /)"),
    (callsite.native.Executable,
     "(name, reifier=None, *, kind='python', visible=False, locations=None, states=None, "
     "locals=None, source=None)"),
    (callsite.native.Executable.frame, "(self, /, state=0)"),
    (callsite.native.NativeFrame, "(executable, state=0)"),
])
def test_signature_text(fn, expected):
    assert str(inspect.signature(fn)) == expected


def test_documented_keywords_work():
    f = callsite.Filter(include=(), exclude=(), limit=3, default_exclusions=False)
    assert f.first_user_frame(skip=0) is not None
    tb = callsite.capture(skip=0, limit=2, filter=f, source="walk")
    assert tb.to_mlir(filter=f) == tb.to_mlir(f)
    exe = callsite.native.Executable(name="e", reifier=lambda s: None, kind="jit")
    with exe.frame(state=3) as frame:
        assert frame.state == 3
    assert callsite.native.NativeFrame(executable=exe, state=1).state == 1


def test_traceback_is_a_sequence():
    from collections.abc import Sequence

    def here():
        return callsite.capture()

    tb = here()
    assert isinstance(tb, Sequence)
    frames = list(tb)
    assert frames == [tb[i] for i in range(len(tb))]
    assert list(reversed(tb)) == frames[::-1]
    assert tb[1] in tb and "x" not in tb
    assert tb.index(tb[1]) == 1 and tb.index(tb[1], 1) == 1
    with pytest.raises(ValueError):
        tb.index(tb[0], 1)
    assert tb.count(tb[0]) == 1 and tb.count(None) == 0
    for name in ("__iter__", "__reversed__", "__contains__", "index", "count"):
        assert name in vars(callsite.Traceback), name
