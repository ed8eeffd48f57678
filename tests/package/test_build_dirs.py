"""The build backend (backend/callsite_build_backend.py): pip builds of one checkout for two
Python environments at once do not share a CMake build folder, and two builds of one folder at
once run one after the other."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from where import REPO

pytest.importorskip("scikit_build_core", reason="scikit-build-core is not installed here")

BACKEND = REPO / "backend"


def _env():
    """The environment of a child: the backend importable, and this environment's packages
    (scikit-build-core) behind the child's own."""
    import scikit_build_core

    packages = os.path.dirname(os.path.dirname(scikit_build_core.__file__))
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(BACKEND), packages])}


def _child(python, code):
    """Runs `code` with `python` in the checkout; its output."""
    result = subprocess.run([str(python), "-c", textwrap.dedent(code)], cwd=REPO, env=_env(),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


BUILD_DIR = """
    import callsite_build_backend as backend
    print(backend.with_build_dir(None)["build-dir"])
"""


def test_pyproject_builds_through_the_backend():
    tomllib = pytest.importorskip("tomllib", reason="tomllib is in the standard library from 3.11")

    with open(REPO / "pyproject.toml", "rb") as f:
        system = tomllib.load(f)["build-system"]
    assert system["build-backend"] == "callsite_build_backend"
    assert system["backend-path"] == ["backend"]


def test_two_environments_of_one_python_get_two_build_folders(tmp_path):
    """This environment and a new virtual environment of the same interpreter (the same wheel
    tag, so the same folder under build-dir = "build/{wheel_tag}") build in different
    folders; each names its wheel tag; an explicit build-dir is kept."""
    other = tmp_path / "other-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(other)], check=True,
                   timeout=120)
    here = _child(sys.executable, BUILD_DIR)
    there = _child(other / "bin" / "python", BUILD_DIR)
    assert here != there
    for folder in (here, there):
        assert folder.startswith("build/{wheel_tag}-"), folder
    assert _child(sys.executable, BUILD_DIR) == here  # the same environment: the same folder
    given = _child(sys.executable, """
        import callsite_build_backend as backend
        print(backend.with_build_dir({"build-dir": "build/mine"})["build-dir"])
    """)
    assert given == "build/mine"


def test_two_builds_of_one_folder_run_one_after_the_other(tmp_path):
    """Two processes entering the backend's lock for one build folder at once: the second
    enters only after the first has left (the order of the events, not a timing)."""
    log = tmp_path / "events"
    code = """
        import os, sys, time
        import callsite_build_backend as backend
        log, name, start = sys.argv[1], sys.argv[2], sys.argv[3]
        while not os.path.exists(start):
            time.sleep(0.01)
        with backend.locked({"build-dir": "build/shared"}):
            with open(log, "a") as f:
                f.write(f"enter {name}\\n")
            time.sleep(0.5)
            with open(log, "a") as f:
                f.write(f"leave {name}\\n")
    """
    start = tmp_path / "start"
    workers = [subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), str(log), name,
                                 str(start)], cwd=tmp_path, env=_env())
               for name in ("a", "b")]
    start.write_text("")
    assert all(worker.wait(timeout=120) == 0 for worker in workers)
    events = log.read_text().split("\n")[:-1]
    assert len(events) == 4
    assert events[0].split()[1] == events[1].split()[1], events  # enter x, leave x, ...
    assert [e.split()[0] for e in events] == ["enter", "leave", "enter", "leave"], events
