"""Every type callsite creates is named by its import path: a C type's `tp_name` (what repr,
tracebacks and pickling show) resolves, through imports and attributes, to the type itself.

The types are found, not listed: every type object alive after importing callsite and its
submodules whose module is callsite's, so a new type is covered without editing this file.
"""
from __future__ import annotations

import gc
import importlib

import pytest

import callsite
import callsite.mlir  # noqa: F401  (their types exist once imported, whatever ran before)
import callsite.native  # noqa: F401
import callsite.torch  # noqa: F401
import callsite.tracking  # noqa: F401

try:  # the demo's native interpreter, in builds that have it
    importlib.import_module("callsite._calc")
except ImportError:
    pass


def callsite_types() -> dict[str, type]:
    """module.qualname -> type of every type alive whose module is callsite's (its C types,
    and the classes of its .py files, which are named by their import path by construction)."""
    found = {}
    for obj in gc.get_objects():
        # A metatype's __module__ can be a descriptor (Cython 3.2's, loaded with torch).
        if isinstance(obj, type) and str(obj.__module__).split(".")[0] == "callsite" \
                and "<locals>" not in obj.__qualname__:
            found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def resolve(path: str):
    """The object `path` names: the longest importable prefix, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


TYPES = callsite_types()


def test_the_extension_types_are_found():
    for name in ("callsite.Traceback", "callsite.Frame", "callsite.Filter",
                 "callsite.native.NativeFrame", "callsite.native.Executable"):
        assert name in TYPES, sorted(TYPES)


@pytest.mark.parametrize("name", sorted(TYPES))
def test_tp_name_is_the_import_path(name):
    try:
        found = resolve(name)
    except (ImportError, AttributeError) as e:
        pytest.fail(f"{name} does not import: {e!r}")
    assert found is TYPES[name], f"{name} names {found!r}, not the type"


def test_resolve_can_fail():
    with pytest.raises(AttributeError):
        resolve("callsite.NoSuchType")
