"""One list of supported CPython versions: pyproject.toml (requires-python and the
classifiers), scripts/common.sh (the versions the suite runs on) and docs/versions.md (the
table) name the same minors. A new version is added to all three (docs/architecture.md)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from where import REPO  # noqa: E402

pytestmark = pytest.mark.skipif(not (REPO / "pyproject.toml").is_file(),
                                reason="needs the checkout")


def pyproject_minors(text: str) -> tuple[str, list[str]]:
    """(the requires-python floor, the minors of the version classifiers)."""
    floor = re.search(r'^requires-python\s*=\s*">=\s*(3\.\d+)"', text, re.M)
    assert floor, "pyproject.toml has no requires-python = \">=3.X\""
    return floor.group(1), re.findall(r'"Programming Language :: Python :: (3\.\d+)"', text)


def common_sh_minors(text: str) -> list[str]:
    """The minors of CALLSITE_HOST_MINORS and CALLSITE_CHROOT_MINORS, in order."""
    minors = []
    for name in ("CALLSITE_HOST_MINORS", "CALLSITE_CHROOT_MINORS"):
        found = re.search(rf"^{name}=\(([^)]*)\)", text, re.M)
        assert found, f"scripts/common.sh does not set {name}"
        minors += found.group(1).split()
    return minors


def versions_md_minors(text: str) -> list[str]:
    """The minors of the table's rows that name one version ("| 3.12 | ...")."""
    return re.findall(r"^\|\s*(3\.\d+)\s*\|", text, re.M)


def key(minor: str) -> tuple[int, int]:
    major, _, rest = minor.partition(".")
    return int(major), int(rest)


def test_the_three_lists_of_versions_agree():
    floor, classifiers = pyproject_minors((REPO / "pyproject.toml").read_text())
    scripts = common_sh_minors((REPO / "scripts" / "common.sh").read_text())
    docs = versions_md_minors((REPO / "docs" / "versions.md").read_text())
    assert sorted(scripts, key=key) == sorted(classifiers, key=key) == sorted(docs, key=key)
    assert floor == min(classifiers, key=key)


def test_a_disagreement_is_found():
    """The parsers see a version missing from one list."""
    pyproject = ('requires-python = ">=3.10"\n'
                 '  "Programming Language :: Python :: 3.10",\n'
                 '  "Programming Language :: Python :: 3.11",\n')
    assert pyproject_minors(pyproject) == ("3.10", ["3.10", "3.11"])
    common = "CALLSITE_HOST_MINORS=(3.10 3.11)\nCALLSITE_CHROOT_MINORS=(3.12)\n"
    assert common_sh_minors(common) == ["3.10", "3.11", "3.12"]
    table = "| CPython | x |\n|:--|:--|\n| 3.10 | a |\n| 3.11 | b |\n| 3.13t, 3.14t | c |\n"
    assert versions_md_minors(table) == ["3.10", "3.11"]
