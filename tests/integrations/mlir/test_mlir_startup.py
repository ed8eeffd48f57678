"""The CALLSITE_MLIR row of the start-up hook (python/startup: callsite.pth and
_callsite_startup.py) of this checkout: which values switch it on, what it imports at
start-up and which loaders it touches.

Each case runs a fresh interpreter with -S that processes the checkout's start-up directory as
a site directory (as site.py does with site-packages), then this interpreter's site-packages:
an installed copy of the hook then finds this one already imported.
"""
from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import textwrap

import pytest

import callsite

from hardening_support import _ENV_KEEP, assert_clean

from where import REPO  # noqa: E402

STARTUP = os.path.join(str(REPO), "python",
                       "startup")
# Where the callsite under test lives: on the path when the hook runs, as in a venv, where the
# .pth sits beside the package (with -S, site-packages is not on the path until added).
CALLSITE_HOME = os.path.dirname(os.path.dirname(callsite.__file__))


def run_with_hook(value: str | None, code: str, *, twice: str | None = None,
                  extra_path: str | None = None):
    """Runs `code` after the hook ran with CALLSITE_MLIR=`value` (unset: None); `twice`: a
    second path to the same directory, processed too (a venv's site-packages seen twice)."""
    dirs = [STARTUP] + ([twice] if twice else [])
    prelude = textwrap.dedent(f'''
        import sys, site
        sys.path[:0] = {([extra_path] if extra_path else []) + [CALLSITE_HOME]!r}
        before = set(sys.modules)
        for d in {dirs!r}:
            site.addsitedir(d)
        at_start = sorted(set(sys.modules) - before)
        for d in {site.getsitepackages()!r}:
            site.addsitedir(d)
        def watching():
            return [key for f in sys.meta_path if type(f).__name__ == "ImportWatcher"
                    for key in f.watches]
    ''')
    base = {k: v for k, v in os.environ.items() if k in _ENV_KEEP and k != "CALLSITE_MLIR"}
    if value is not None:
        base["CALLSITE_MLIR"] = value
    return subprocess.run([sys.executable, "-S", "-c", prelude + textwrap.dedent(code)],
                          capture_output=True, text=True, timeout=120, env=base, cwd="/")


REPORT = '''
import json
print(json.dumps(dict(watching=watching(), at_start=at_start)))
'''


@pytest.mark.parametrize("value", ["0", "", " 0", "false", "FALSE ", "off", "No", "\t0\n"])
def test_off_values_are_off_silently(value):
    proc = run_with_hook(value, REPORT)
    assert_clean(proc)
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["watching"] == []


@pytest.mark.parametrize("value", ["1", " 1", "true", "ON", "yes "])
def test_on_values_watch_the_imports(value):
    proc = run_with_hook(value, REPORT)
    assert_clean(proc)
    assert proc.stderr == ""
    assert json.loads(proc.stdout)["watching"] == ["mlir"]


@pytest.mark.parametrize("value", ["banana", "2", "enable", "yes please"])
def test_other_values_are_reported_once_and_leave_it_off(value, tmp_path):
    alias = tmp_path / "startup-alias"
    alias.symlink_to(STARTUP, target_is_directory=True)
    proc = run_with_hook(value, REPORT, twice=str(alias))
    assert_clean(proc)
    assert json.loads(proc.stdout)["watching"] == []
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr  # once per process, though the .pth ran twice
    assert "CALLSITE_MLIR" in lines[0] and repr(value) in lines[0]
    for accepted in ("1", "true", "on", "yes", "0", "false", "off", "no"):
        assert accepted in lines[0]
    assert "stays off" in lines[0]


def test_start_up_imports_only_the_hook_and_its_watcher():
    """What site.py loads before: nothing else comes in (no __future__, no types)."""
    on = run_with_hook("1", REPORT)
    off = run_with_hook(None, REPORT)
    assert_clean(on)
    assert_clean(off)
    # What site.py itself imports to read a .pth (3.14+: encodings.utf_8_sig) comes in either way.
    by_site = json.loads(off.stdout)["at_start"]
    assert [m for m in by_site if "callsite" in m] == []
    added = sorted(set(json.loads(on.stdout)["at_start"]) - set(by_site))
    assert added == ["_callsite_startup", "callsite._import_watch", "callsite._switches",
                     "callsite.mlir._detect"]


def test_loaders_of_other_ir_modules_are_left_alone(tmp_path):
    """A top-level `ir` and a package's `ir` that are not MLIR keep their own loaders; an `ir`
    beside a `_mlir_libs` package (MLIR's layout) is watched."""
    (tmp_path / "ir.py").write_text("VALUE = 'top'\n")
    for package, mlir_layout in (("graphs", False), ("fakemlir", True)):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
        (tmp_path / package / "ir.py").write_text(f"VALUE = {package!r}\n")
        if mlir_layout:
            (tmp_path / package / "_mlir_libs").mkdir()
            (tmp_path / package / "_mlir_libs" / "__init__.py").write_text("")
    proc = run_with_hook("1", '''
        import importlib, importlib.util, json
        loaders, values = {}, {}
        for name in ("ir", "graphs.ir", "fakemlir.ir"):
            loaders[name] = type(importlib.util.find_spec(name).loader).__name__
            values[name] = importlib.import_module(name).VALUE
        print(json.dumps(dict(loaders=loaders, values=values, watching=watching())))
    ''', extra_path=str(tmp_path))
    assert_clean(proc)
    report = json.loads(proc.stdout)
    assert report["watching"] == ["mlir"]
    assert report["loaders"] == {"ir": "SourceFileLoader", "graphs.ir": "SourceFileLoader",
                                 "fakemlir.ir": "_NotifyingLoader"}
    assert report["values"] == {"ir": "top", "graphs.ir": "graphs", "fakemlir.ir": "fakemlir"}
