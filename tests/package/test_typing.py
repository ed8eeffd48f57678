"""The installed package type-checks: mypy --strict on it, stubtest of its stubs against the
running extension, code that fails at run time is refused by the stubs, and the same in a user's
environment: a wheel in a clean venv next to the MLIR bindings, jaxlib and (3.11) torch, with no
configuration of ours."""
import glob
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap
import venv

import pytest

from where import TESTS  # noqa: E402

HERE = TESTS / "typing"
CONFIG = HERE / "mypy.ini"
REPO = TESTS.parent

pytestmark = pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                                reason="mypy is not installed (scripts/setup.sh installs it)")


def mypy(*args, cwd, python=sys.executable):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run([str(python), "-m", *args], capture_output=True, text=True, cwd=cwd,
                          env=env, timeout=900)


def test_mypy_strict_on_the_package(tmp_path):
    r = mypy("mypy", "--config-file", str(CONFIG), "--cache-dir", str(tmp_path / "cache"),
             "-p", "callsite", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("Success: no issues found")


def test_stubtest(tmp_path):
    r = mypy("mypy.stubtest", "--mypy-config-file", str(CONFIG), "callsite", cwd=tmp_path)
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


GOOD = textwrap.dedent("""\
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


def test_the_stubs_accept_the_documented_calls(tmp_path):
    (tmp_path / "user.py").write_text(GOOD)
    r = mypy("mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), "user.py", cwd=tmp_path)
    assert r.returncode == 0, r.stdout


# --- in a user's environment ---------------------------------------------------------------------

USER_VERSIONS = ((3, 11), (3, 12))  # 3.11: the one torch wheel here; 3.12: the target


def _peers():
    """The packages a user of callsite has next to it, as pip arguments."""
    peers = {"iree-base-compiler": ["iree-base-compiler"], "jaxlib": ["jaxlib"]}
    if sys.version_info[:2] == (3, 11):
        # The CPU wheel on local disk: any other torch pulls gigabytes of CUDA.
        wheels = glob.glob("/opt/wheels/torch-2.13.0+cpu-cp311-*.whl")
        peers["torch"] = wheels[:1] or ["torch==2.13.0"]
    return peers


def _run(cmd, **kw):
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800,
                          **kw)


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory):
    """A venv outside the checkout with mypy, the peers and a wheel of this checkout; kept in
    ~/.cache/callsite-typing-test (CALLSITE_TYPING_TEST_CACHE) between runs, the wheel reinstalled."""
    if sys.version_info[:2] not in USER_VERSIONS:
        pytest.skip(f"slow: runs on Python {' and '.join('%d.%d' % v for v in USER_VERSIONS)}")
    if os.environ.get("CALLSITE_SKIP_WHEEL_TEST") == "1":
        pytest.skip("CALLSITE_SKIP_WHEEL_TEST=1")
    if not (REPO / "pyproject.toml").is_file():
        pytest.skip("needs the checkout")
    cache = pathlib.Path(os.environ.get("CALLSITE_TYPING_TEST_CACHE",
                                        pathlib.Path.home() / ".cache" / "callsite-typing-test"))
    where = cache / f"py{sys.version_info[0]}.{sys.version_info[1]}"
    python = where / "bin" / "python"
    if not (where / ".ready").is_file():
        shutil.rmtree(where, ignore_errors=True)
        venv.create(where, with_pip=True)
        r = _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "mypy"])
        assert r.returncode == 0, r.stderr[-2000:]
        (where / ".ready").write_text("mypy\n")
    for name, spec in _peers().items():
        done, failed = where / f".peer-{name}", where / f".failed-{name}"
        if failed.is_file():
            pytest.skip(f"{name} does not install for Python {sys.version.split()[0]}: "
                        f"{failed.read_text().strip()} (delete {failed} to retry)")
        if not done.is_file():
            r = _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check", *spec])
            if r.returncode != 0:
                failed.write_text((r.stderr.strip().splitlines() or ["pip failed"])[-1])
                pytest.skip(f"{name} does not install: {failed.read_text()}")
            done.write_text(" ".join(spec))
    out = tmp_path_factory.mktemp("wheel")
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "-q",
              "-w", out, REPO], cwd=REPO)
    assert r.returncode == 0, r.stderr[-3000:]
    (wheel,) = out.glob("callsite-*.whl")
    r = _run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
              "--force-reinstall", "--no-deps", wheel])
    assert r.returncode == 0, r.stderr[-3000:]
    return python


def test_stubtest_in_a_users_environment(user_venv, tmp_path):
    """No configuration and no allowlist: what a user runs."""
    r = mypy("mypy.stubtest", "callsite", cwd=tmp_path, python=user_venv)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Success: no issues found" in r.stdout


def test_mypy_strict_on_a_users_file_in_a_users_environment(user_venv, tmp_path):
    user = GOOD + textwrap.dedent("""\
        import callsite.mlir
        with callsite.mlir.auto_locations(filter=f):
            pass
        limit: int = callsite.mlir.loc_tracebacks_frame_limit()
        """)
    (tmp_path / "user.py").write_text(user)
    r = mypy("mypy", "--strict", "user.py", cwd=tmp_path, python=user_venv)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_wheel_ships_no_example_as_a_module(user_venv):
    site = _run([user_venv, "-c", "import callsite, os; print(os.path.dirname(callsite.__file__))"],
                cwd="/")
    package = pathlib.Path(site.stdout.strip())
    assert package.name == "callsite" and (package / "py.typed").is_file()
    modules = {p.relative_to(package).as_posix() for p in package.rglob("*.py")}
    assert modules and not {m for m in modules if "example" in m or m.startswith(("dsl/", "pycde/"))}
    demo = _run([user_venv, "-c", "from callsite._cli import demo; print(demo.examples_dir())"],
                cwd="/")
    assert demo.returncode == 0, demo.stderr
    assert pathlib.Path(demo.stdout.strip()).parts[-3:] == ("share", "callsite", "examples")
