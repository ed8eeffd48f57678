"""tests/support/peers.py, which every peer test goes through: a bad name is an error naming it, a peer
that did not install skips with the reason scripts/peers.sh recorded, and a suite told the peer
tests run elsewhere skips them."""
from __future__ import annotations

import os
import sys

import pytest

import peers


@pytest.fixture
def repo(tmp_path, monkeypatch):
    (tmp_path / "requirements" / "peers").mkdir(parents=True)
    (tmp_path / "requirements" / "peers" / "demo.txt").write_text("# python: 3.11\ndemo==1\n")
    (tmp_path / ".venv").mkdir()
    monkeypatch.setattr(peers, "ROOT", str(tmp_path))
    monkeypatch.delenv("CALLSITE_PEER_SUITES", raising=False)
    return tmp_path


def test_unknown_name_is_an_error_naming_it(repo):
    with pytest.raises(ValueError, match=r"requirements/peers/\*\.txt, got 'nope'"):
        peers.peer_python("nope")


def test_failed_install_skips_with_the_recorded_reason(repo):
    (repo / ".venv" / "peer-demo.failed").write_text("ERROR: No matching distribution for demo==1\n")
    with pytest.raises(pytest.skip.Exception, match="did not install: ERROR: No matching distribution"):
        peers.peer_python("demo")


def test_missing_venv_skips_naming_the_installer(repo):
    with pytest.raises(pytest.skip.Exception, match=r"run scripts/peers.sh demo"):
        peers.peer_python("demo")


def test_installed_venv_gives_its_python(repo):
    python = repo / ".venv" / "peer-demo" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(os.path.realpath(sys.executable))
    assert peers.peer_python("demo") == str(python)


def test_peer_tests_of_another_suite_skip(repo, monkeypatch):
    python = repo / ".venv" / "peer-demo" / "bin" / "python"
    python.parent.mkdir(parents=True)
    python.symlink_to(os.path.realpath(sys.executable))
    monkeypatch.setenv("CALLSITE_PEER_SUITES", "0")
    with pytest.raises(pytest.skip.Exception, match="run in another suite"):
        peers.peer_python("demo")


def test_every_peer_file_names_its_python():
    folder = os.path.join(peers.ROOT, "requirements", "peers")
    names = sorted(f for f in os.listdir(folder) if f.endswith(".txt"))
    assert names, folder
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8") as f:
            assert f.readline().startswith("# python: 3."), name
    assert set(peers.PEER_PACKAGES) <= {n[:-4] for n in names}
