"""callsite._import_watch: the one meta path finder every integration waits through. A watched
module is imported by its own loader (either protocol) and the watch is told once it has run;
other modules keep their loaders. Each case in a fresh interpreter (the watcher is process-wide)."""
from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

PRELUDE = '''
import importlib.machinery, json, sys, types, warnings
from callsite import _import_watch as W
seen = []
'''


def run(code: str, tmp_path) -> dict:
    done = subprocess.run([sys.executable, "-c", PRELUDE + textwrap.dedent(code), str(tmp_path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_watched_module_is_reported_after_it_ran(tmp_path):
    (tmp_path / "watched_a.py").write_text("VALUE = 1\n")
    (tmp_path / "other_a.py").write_text("VALUE = 2\n")
    report = run('''
        sys.path.insert(0, sys.argv[1])
        W.watch("a", lambda n: n == "watched_a", lambda m: seen.append((m.__name__, m.VALUE)))
        import watched_a, other_a
        print(json.dumps(dict(seen=seen, loaders=[type(m.__loader__).__name__
                                                  for m in (watched_a, other_a)],
                              watching=W.watching("a"))))
    ''', tmp_path)
    assert report == {"seen": [["watched_a", 1]],
                      "loaders": ["_NotifyingLoader", "SourceFileLoader"], "watching": True}


def test_two_watches_share_one_finder_and_unwatch_ends_one(tmp_path):
    for name in ("m1", "m2"):
        (tmp_path / f"{name}.py").write_text("")
    report = run('''
        sys.path.insert(0, sys.argv[1])
        W.watch("one", lambda n: n.startswith("m"), lambda m: seen.append(["one", m.__name__]))
        W.watch("two", lambda n: n == "m1", lambda m: seen.append(["two", m.__name__]))
        import m1
        W.unwatch("one")
        import m2
        finders = sum(isinstance(f, W.ImportWatcher) for f in sys.meta_path)
        print(json.dumps(dict(seen=seen, finders=finders, one=W.watching("one"))))
    ''', tmp_path)
    assert report == {"seen": [["one", "m1"], ["two", "m1"]], "finders": 1, "one": False}


def test_a_loader_of_the_legacy_protocol_is_served_too(tmp_path):
    report = run('''
        import importlib._bootstrap as B
        if not hasattr(B, "_load_backward_compatible"):
            print(json.dumps(dict(skip="this Python imports through exec_module only")))
            raise SystemExit
        class Legacy:  # load_module only, as loaders written before PEP 451
            def load_module(self, fullname):
                module = sys.modules[fullname] = types.ModuleType(fullname)
                module.VALUE = "legacy"
                return module
        class Finder:
            def find_spec(self, fullname, path, target=None):
                if fullname == "legacy_mod":
                    return importlib.machinery.ModuleSpec(fullname, Legacy())
                return None
        sys.meta_path.append(Finder())
        W.watch("legacy", lambda n: n == "legacy_mod", lambda m: seen.append(m.VALUE))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ImportWarning)
            import legacy_mod
        print(json.dumps(dict(seen=seen, value=legacy_mod.VALUE)))
    ''', tmp_path)
    if "skip" in report:
        pytest.skip(report["skip"])
    assert report == {"seen": ["legacy"], "value": "legacy"}
