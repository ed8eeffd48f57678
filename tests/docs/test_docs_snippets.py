"""Every ```python block of the documentation site, and every ``Example:`` of a public name's
docstring (the API reference shows them), runs as written (each in a fresh interpreter, outside
the checkout), as the README's do (test_readme.py).

A block that cannot run on its own (a fragment of a longer program, or one that needs a GPU)
is preceded by the line ``<!-- not run: why -->``; the reason is printed as the skip reason.
"""
import pytest

from api_docstrings import example, public_names
from doc_snippets import python_blocks, run_as_written, skip_unless_importable
from where import REPO  # noqa: E402

DOCS = REPO / "docs"


#: Fragments in pages whose authors have not marked them yet: (page, a line the block holds) -> why.
FRAGMENTS = {
    ("mlir.md", "callsite.mlir.accelerate(ir)"): "a fragment: `ir` stands for any bindings' ir module",
    ("native.md", 'native.Executable("kernel", kind="dsl", visible=True,'): "a fragment of the visible-frames example",
    ("tracking.md", "run_user_program()"): "a fragment: run_user_program stands for the user's program",
    ("mlir.md", "callsite.mlir.location(node.traceback, filter=framework)"):
        "a fragment: `node` stands for a graph node at emit time",
}


def pages():
    return sorted(p for p in DOCS.rglob("*.md") if not any(s.startswith("_") for s in p.parts))


def snippets():
    out = []
    for page in pages():
        for i, (code, why) in enumerate(python_blocks(page.read_text(encoding="utf-8"))):
            rel = page.relative_to(DOCS).as_posix()
            why = why or next((w for (pg, line), w in FRAGMENTS.items()
                               if pg == rel and line in code), None)
            out.append(pytest.param(code, why, id=f"{rel}-{i}"))
    return out


def api_examples():
    return [pytest.param(code, None, id=f"api-{name}")
            for name, obj in sorted(public_names().items()) if (code := example(obj))]


def test_the_site_has_snippets():
    assert len(snippets()) >= 15, "the documentation lost its Python snippets"
    assert len(api_examples()) >= 40, "the API reference lost its examples"


@pytest.mark.parametrize("code,why_not", snippets() + api_examples())
def test_snippet_runs_as_written(code, why_not, tmp_path):
    if why_not:
        pytest.skip(f"not run: {why_not}")
    skip_unless_importable(code)
    run_as_written(code, tmp_path)
