"""The Python API reference (docs/api/python.md, autodoc) lists every public name with its stub
signature, every public callable's docstring has an example (test_docs_snippets.py runs them),
and every error a docstring's ``Raises:`` section names is raised by the call its entry names."""
from __future__ import annotations

import builtins
import html
import inspect
import re

import pytest

from api_docstrings import example, public_modules, public_names, raises
from docs_site import built_site

#: ``Raises:`` entries without a call, and why no call here raises them.
UNCALLED = {
    ("callsite.boundary", "RuntimeError"): "entering it twice would leave a boundary open in this process",
    ("callsite.cmake_dir", "FileNotFoundError"): "only in a development tree",
    ("callsite.include_dir", "FileNotFoundError"): "only without an installed wheel or a checkout",
    ("callsite.set_backend", "RuntimeError"): "only where the internal walk is refused",
    ("callsite.mlir.auto_locations", "ImportError"): "only in a process that imported no MLIR bindings",
    ("callsite.mlir.bindings", "ImportError"): "only in a process that imported no MLIR bindings",
    ("callsite.native.FrameLocals", "TypeError"): "a FrameLocals is reached only inside a visible frame",
    ("callsite.torch.frames", "RuntimeError"): "only with a torch whose code is not recognised",
}


def expected_names() -> set[str]:
    """module.name for every name in a public module's __all__, and module.Type.member for every
    public member a public type defines itself."""
    names = set()
    for name, obj in public_names().items():
        names.add(name)
        if inspect.isclass(obj):
            names.update(f"{name}.{m}" for m in vars(obj) if not m.startswith("_"))
    return names


def reference_ids(page: str) -> set[str]:
    return set(re.findall(r'<dt class="sig sig-object py[^"]*" id="([^"]+)"', page))


def missing_from(ids: set[str], names: set[str]) -> list[str]:
    return sorted(names - ids)


@pytest.fixture(scope="module")
def page() -> str:
    return (built_site() / "api" / "python.html").read_text(encoding="utf-8")


def test_every_public_module_has_all():
    assert [m.__name__ for m in public_modules() if not hasattr(m, "__all__")] == []


def test_every_public_name_is_in_the_reference(page):
    names = expected_names()
    assert {"callsite.capture", "callsite.Filter.keeps", "callsite.mlir.location",
            "callsite.native.Executable", "callsite.tracking.enable", "callsite.__version__"} <= names
    assert missing_from(reference_ids(page), names) == []


def test_a_missing_name_is_reported(page):
    ids = reference_ids(page) - {"callsite.capture", "callsite.Traceback.raw"}
    assert missing_from(ids, expected_names()) == ["callsite.Traceback.raw", "callsite.capture"]


def _text(page: str, anchor: str) -> str:
    start = page.index(f'id="{anchor}"')
    end = page.find('<dt class="sig sig-object py', start + 1)
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", page[start:end])))


def test_c_functions_show_the_stub_signature_errors_and_example(page):
    capture = _text(page, "callsite.capture")
    assert "skip: int = 0" in capture and "→ Traceback" in capture  # from __init__.pyi
    assert "Raises" in capture and "RuntimeError" in capture
    assert "Example" in capture and "where_am_i" in capture
    keeps = _text(page, "callsite.Filter.keeps")
    assert "CodeType | FunctionType | FrameType | Frame | str" in keeps


def public_callables() -> list[str]:
    return sorted(name for name, obj in public_names().items() if callable(obj))


def test_every_public_callable_has_an_example():
    assert [n for n in public_callables() if not example(public_names()[n])] == []


def _raising_calls():
    for name in public_callables():
        for exc, call in raises(public_names()[name]):
            if call is None:
                assert (name, exc) in UNCALLED, f"{name}: the {exc} entry names no call (as in ``...``)"
                continue
            yield pytest.param(exc, call, id=f"{name}-{call[:40]}")


def test_uncalled_entries_are_documented():
    documented = {(n, exc) for n in public_callables() for exc, _ in raises(public_names()[n])}
    assert sorted(set(UNCALLED) - documented) == []


@pytest.mark.parametrize("exc,call", list(_raising_calls()))
def test_documented_error_is_raised(exc, call):
    import callsite
    import callsite.mlir
    import callsite.native
    import callsite.torch
    import callsite.tracking

    scope = {"callsite": callsite, "mlir": callsite.mlir, "native": callsite.native,
             "tracking": callsite.tracking,
             "exe": callsite.native.Executable("k", lambda s: callsite.native.Location("k.dsl", s + 1))}
    expected = getattr(builtins, exc, None)
    assert isinstance(expected, type) and issubclass(expected, BaseException), exc
    with pytest.raises(expected) as info:
        eval(call, scope)
    message = str(info.value)
    assert len(message) > 10, f"{call} raised {exc} without a message"
