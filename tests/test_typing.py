"""The installed package type-checks: mypy --strict on it, stubtest of its stubs against the
running extension, and code that fails at run time is refused by the stubs."""
import importlib.util
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

HERE = pathlib.Path(__file__).resolve().parent / "typing"
CONFIG = HERE / "mypy.ini"

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (scripts/setup.sh installs it)")


def mypy(*args, cwd):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run([sys.executable, "-m", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=900)


def test_mypy_strict_on_the_package(tmp_path):
    r = mypy("mypy", "--config-file", str(CONFIG), "--cache-dir", str(tmp_path / "cache"),
             "-p", "callsite", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Success: no issues found")


def test_stubtest(tmp_path):
    r = mypy("mypy.stubtest", "--mypy-config-file", str(CONFIG),
             "--allowlist", str(HERE / "stubtest_allowlist.txt"), "--ignore-unused-allowlist",
             "callsite", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found" in r.stdout


def test_the_stubs_refuse_what_fails_at_run_time(tmp_path):
    """Each line fails at run time; mypy --strict must flag every one of them."""
    bad = {
        "callsite.set_backend(None)": "set_backend",
        "callsite.capture(limit='3')": "capture",
        "callsite.Filter().exclude_dir(3)": "exclude_dir",
        "callsite.tracking.enable(mode='sometimes')": "enable",
        "callsite.capture().nope": "nope",
        "callsite.Filter().first_user_frame(1, 2)": "first_user_frame",
    }
    src = "import callsite\nimport callsite.tracking\n" + "\n".join(bad) + "\n"
    (tmp_path / "user.py").write_text(src)
    r = mypy("mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "user.py", cwd=tmp_path)
    flagged = {int(line.split(":")[1]) for line in r.stdout.splitlines() if ": error:" in line}
    assert flagged == set(range(3, 3 + len(bad))), r.stdout


def test_the_stubs_accept_the_documented_calls(tmp_path):
    good = textwrap.dedent("""\
        import os, pathlib
        import callsite, callsite.native, callsite.tracking
        from collections.abc import Sequence

        f = callsite.Filter(exclude=[r"site-packages"], limit=5)
        f.exclude_dir(pathlib.Path("/x"))
        f.include_file(os.path.join("/y", "z.py"))
        frame = f.first_user_frame(skip=1)
        tb: Sequence[callsite.Frame] = callsite.capture(skip=0, limit=10, filter=f)
        t = callsite.capture()
        n: int = t.index(t[0]) + t.count(t[0]) + len(list(reversed(t)))
        ok: bool = t[0] in t
        text: str = t.to_mlir(filter=f)
        report: dict[str, object] = callsite.doctor()
        v: str = callsite.__version__
        with callsite.tracking.enable(mode="auto", window=4, filter=f):
            pass
        exe = callsite.native.Executable("x", lambda pc: callsite.native.Location("x.dsl", pc))
        with exe.frame(state=1) as nf:
            nf.state = 2
        """)
    (tmp_path / "user.py").write_text(good)
    r = mypy("mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "user.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout
