"""The README's Python snippets run as written (each in a fresh interpreter, outside the checkout)."""
import os
import re
import subprocess
import sys

import pytest

from doc_snippets import python_blocks, run_as_written, skip_unless_importable
from where import REPO  # noqa: E402

README = REPO / "README.md"


def snippets():
    blocks = python_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 5, "the README lost its Python snippets"
    out = []
    for i, (block, why) in enumerate(blocks):
        first = next(line for line in block.splitlines() if line.strip())
        out.append(pytest.param(block, why, id=f"{i}-{first[:40]}"))
    return out


@pytest.mark.parametrize("block,why_not", snippets())
def test_snippet_runs_as_written(block, why_not, tmp_path):
    if why_not:
        pytest.skip(f"not run: {why_not}")
    skip_unless_importable(block)
    run_as_written(block, tmp_path)


def test_quick_start_prints_the_callers_line(tmp_path):
    block = snippets()[0].values[0]
    assert "where_am_i" in block
    script = tmp_path / "quick.py"
    script.write_text(block, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, check=True)
    lineno = next(i for i, line in enumerate(block.splitlines(), 1) if "tb = where_am_i()" in line)
    first = run.stdout.splitlines()[0]
    assert first == f"{script} {lineno} <module>"
    assert f'"{script}":{lineno}:' in run.stdout  # the MLIR location names the same place


def test_readme_opens_with_the_two_commands():
    text = README.read_text(encoding="utf-8")
    first_block = re.search(r"```sh\n(.*?)```", text, flags=re.S).group(1)
    assert [line.split()[0] for line in first_block.splitlines()] == ["scripts/demo.sh",
                                                                     "scripts/test.sh"]


@pytest.mark.parametrize("page", [README, README.parent / "docs" / "install.md"])
def test_install_lines_work_from_a_checkout(page):
    """callsite is not on PyPI: every pip command of the page's shell blocks installs or builds
    the checkout, and the page says so rather than promising wheels."""
    text = page.read_text(encoding="utf-8")
    commands = [line.split("#")[0].split() for block in re.findall(r"```sh\n(.*?)```", text, re.S)
                for line in block.splitlines() if line.startswith("pip ")]
    installs = [c for c in commands if c[1] == "install"]
    assert installs, f"{page.name} shows no install command"
    for c in commands:
        target = c[-1].strip("'\"")
        assert target == "." or target.startswith(".["), f"{page.name}: {' '.join(c)}"
    assert "not on PyPI" in text
    assert not re.search(r"wheels are built\b.*manylinux", text, re.S | re.I)


def test_mlir_snippet_comment_names_the_frames_that_print(tmp_path):
    """The comment above the DSL snippet's kernel() call names, innermost first, every frame of
    the op's location as the snippet really prints it (the bindings' own arith.py included)."""
    block = next(p.values[0] for p in snippets() if "auto_locations(dsl" in p.values[0])
    skip_unless_importable(block)
    comment = " ".join(line.strip().lstrip("# ") for line in block.splitlines()
                       if line.strip().startswith("#"))
    assert "innermost first" in comment
    comment = comment.split("innermost first", 1)[1]
    script = tmp_path / "snippet.py"
    script.write_text(block + "print(module.body.operations[0].location)\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CALLSITE_BACKEND")}
    if os.environ.get("PYTHONPATH"):  # a development build under test
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True,
                         text=True, env=env, timeout=300, check=True)
    location = run.stdout.splitlines()[-1]
    names = re.findall(r'"([^"]+)"\(', location)  # NameLoc names; file names are followed by ':'
    assert len(names) >= 2, location
    at = 0
    for name in names:
        short = name.rsplit(".", 1)[-1]  # co_qualname on 3.11+, co_name on 3.10
        found = comment.find(short, at)
        assert found >= 0, f"the comment misses {name!r} (after {comment[:at]!r}); prints {location}"
        at = found + len(short)


def test_readme_is_a_front_page():
    """At most 200 lines, and every link into the checkout names a file (or a heading) there:
    measured tables and lab notes live on the documentation site, which the links reach."""
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200, f"the README has {len(text.splitlines())} lines"
    root = README.parent
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 10, "the README lost its links into the documentation"
    for link in local:
        path, _, anchor = link.partition("#")
        target = root / path
        assert target.exists(), f"README links to {link}, which does not exist"
        if anchor:
            headings = re.findall(r"^#+ (.+)$", target.read_text(encoding="utf-8"), flags=re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h).strip().lower().replace(" ", "-") for h in headings}
            assert anchor in slugs, f"README links to {link}: no such heading in {path}"
