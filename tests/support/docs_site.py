"""The built documentation site, shared by tests/test_docs_*.py.

``built_site()`` returns ``build/docs/html``: the one named by ``CALLSITE_DOCS_HTML`` (tox.ini
sets it in the docs environment, after scripts/docs.sh), else the one in the checkout when it is
newer than every file it is built from, else it runs scripts/docs.sh (which installs its own
requirements) under a lock, so that concurrent test runs build it once.
"""
from __future__ import annotations

import fcntl
import os
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
HTML = REPO / "build" / "docs" / "html"
#: What the site is built from: a change to any of these makes the built site stale.
SOURCES = [DOCS, REPO / "include" / "callsite", REPO / "python" / "callsite",
           REPO / "scripts" / "docs.sh", REPO / "requirements" / "docs.txt",
           REPO / "CHANGELOG.md", REPO / "CONTRIBUTING.md"]


def _newest_source() -> float:
    newest = 0.0
    for src in SOURCES:
        files = [src] if src.is_file() else [p for p in src.rglob("*") if p.is_file()
                                               and "__pycache__" not in p.parts]
        for f in files:
            newest = max(newest, f.stat().st_mtime)
    return newest


def _fresh(html: pathlib.Path) -> bool:
    stamp = html / "index.html"
    return stamp.is_file() and stamp.stat().st_mtime > _newest_source()


def _cannot_build() -> str | None:
    """Why scripts/docs.sh cannot run here (its interpreter is missing, as in the 3.14/3.15
    chroot), or None."""
    minor = os.environ.get("CALLSITE_DOCS_PYTHON", "3.12")
    probe = subprocess.run(["bash", "-c", f'source "{REPO}/scripts/common.sh" && callsite_find_python {minor}'],
                           capture_output=True, text=True)
    return None if probe.returncode == 0 else f"Python {minor}: {probe.stdout.strip() or probe.stderr.strip()}"


def built_site() -> pathlib.Path:
    given = os.environ.get("CALLSITE_DOCS_HTML")
    if given:
        html = pathlib.Path(given)
        assert (html / "index.html").is_file(), f"CALLSITE_DOCS_HTML={given} holds no index.html"
        return html
    HTML.parent.mkdir(parents=True, exist_ok=True)
    with open(HTML.parent / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not _fresh(HTML):
            why = _cannot_build()
            if why:
                import pytest

                pytest.skip(f"no built site here and scripts/docs.sh cannot run: {why} "
                            "(scripts/test.sh's docs environment builds the site and runs these tests)")
            env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
            run = subprocess.run(["nice", "-n", "10", str(REPO / "scripts" / "docs.sh")], cwd=REPO,
                                 env=env, capture_output=True, text=True, timeout=3000)
            assert run.returncode == 0, f"scripts/docs.sh failed:\n{run.stdout}\n{run.stderr[-6000:]}"
    return HTML
